#!/usr/bin/env bash
# Builds the Neo4j peer's JVM side: target/neo4j-peer.jar and its dependencies in target/lib (Neo4j Community,
# its bulk importer). Does nothing when the jar is newer than the sources and the pom.
set -euo pipefail
cd "$(dirname "$0")"
jar=target/neo4j-peer.jar
if [[ -f $jar && -d target/lib ]] && [[ -z $(find pom.xml src -newer "$jar" -print -quit) ]]; then
    exit 0
fi
command -v mvn >/dev/null || { echo "maven (mvn) is needed to build the Neo4j peer" >&2; exit 1; }
mvn -q -B -Dstyle.color=never package
