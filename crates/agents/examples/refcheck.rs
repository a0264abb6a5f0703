fn main() {
    for path in std::env::args().skip(1) {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (mut first_hits, mut follow, mut follow_hits) = (0, 0, 0);
        for d in v["data"].as_array().unwrap() {
            for (i, q) in d["dialogue"].as_array().unwrap().iter().enumerate() {
                let q = q.as_str().unwrap();
                let r = chatty_kg_agents::referents::detect(q);
                if i == 0 {
                    if !r.is_empty() {
                        first_hits += 1;
                        println!(
                            "FIRST {q:?} {:?}",
                            r.iter().map(|r| (&r.kind, &r.text)).collect::<Vec<_>>()
                        );
                    }
                } else {
                    follow += 1;
                    if r.is_empty() {
                        println!("MISS {q:?}");
                    } else {
                        follow_hits += 1;
                        println!(
                            "HIT {q:?} {:?}",
                            r.iter().map(|r| (&r.kind, &r.text)).collect::<Vec<_>>()
                        );
                    }
                }
            }
        }
        println!("{path}: first-turn hits {first_hits}, follow-ups {follow_hits}/{follow}");
    }
}
