#!/usr/bin/env bash
# Fuzzes every parser of untrusted input (targets in fuzz/fuzz_targets/) for a bounded time each.
#
#   scripts/fuzz.sh [TARGET...]        all targets when none is named
#
# FUZZ_SECONDS   time per target (default 60)
# FUZZ_JOBS      libFuzzer processes per target (default 1)
# FUZZ_SANITIZER address (default) or none
# CARGO_TARGET_DIR where the fuzz build goes (default fuzz/target; its first build compiles
#                RocksDB, llama.cpp and candle instrumented and takes long)
# CHATTY_KG_WORKER the chatty-kg binary worker_queries evaluates its queries with (default: built
#                here with `cargo build --bin chatty-kg`, uninstrumented, into the same target dir)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`) and a nightly toolchain, or stable with
# RUSTC_BOOTSTRAP=1 (set here unless already set). Prints the executions per target and exits
# non-zero when a target finds a crash (the input is kept under fuzz/artifacts/TARGET/).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"
export RUSTC_BOOTSTRAP="${RUSTC_BOOTSTRAP:-1}"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_JOBS:-1}"
sanitizer="${FUZZ_SANITIZER:-address}"
flags=(-a -s "$sanitizer" --codegen-units 16)

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

echo "== building ${#targets[@]} targets (sanitizer: $sanitizer)"
cargo fuzz build "${flags[@]}"
if [[ " ${targets[*]} " == *" worker_queries "* ]] && [ -z "${CHATTY_KG_WORKER:-}" ]; then
    # The worker is the real binary, not instrumented: the sanitizer's shadow memory would not
    # fit under the worker's own address-space limit.
    echo "== building the worker (chatty-kg)"
    (cd "$root" && cargo build --bin chatty-kg)
    export CHATTY_KG_WORKER="${CARGO_TARGET_DIR:-$root/target}/debug/chatty-kg"
fi

failed=()
summary=()
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "artifacts/$target"
    seeds=()
    [ -d "seeds/$target" ] && seeds=("seeds/$target")
    log="$(mktemp)"
    parallel=()
    [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
    echo "== $target: ${seconds}s"
    start=$(date +%s)
    set +e
    cargo fuzz run "${flags[@]}" "$target" "corpus/$target" "${seeds[@]}" -- \
        -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
        "${parallel[@]}" >"$log" 2>&1
    status=$?
    set -e
    elapsed=$(($(date +%s) - start))
    # (no fuzz-*.log without -jobs: grep's complaint must not end the script under pipefail)
    execs=$({ grep -ho 'stat::number_of_executed_units: *[0-9]*' "$log" fuzz-*.log 2>/dev/null || true; } |
        awk '{ s += $2 } END { print s + 0 }')
    rate=$((execs / (elapsed > 0 ? elapsed : 1)))
    if [ "$status" -ne 0 ]; then
        failed+=("$target")
        tail -n 60 "$log" fuzz-*.log 2>/dev/null || true
        summary+=("$(printf '%-20s CRASH   %12s execs  %8s exec/s' "$target" "$execs" "$rate")")
    else
        summary+=("$(printf '%-20s ok      %12s execs  %8s exec/s' "$target" "$execs" "$rate")")
    fi
    rm -f "$log" fuzz-*.log
done

echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "crashes in: ${failed[*]} (inputs under fuzz/artifacts/)" >&2
    exit 1
fi
