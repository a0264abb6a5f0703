#!/bin/sh
# Loads the bundled MetaQA KB into the embedded store the first time, then runs chatty-kg.
set -e
if [ ! -d /data/store ]; then
  chatty-kg load --store /data/store /opt/chatty-kg/metaqa-kb.nt.gz
fi
exec chatty-kg "$@"
