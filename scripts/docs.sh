#!/usr/bin/env bash
# Builds the DocC documentation of every library product (each has a catalogue) with warnings
# as errors (a broken symbol link, an undocumented parameter or a stale article fails it), then
# checks that every public symbol of NukeCore has a doc comment. The archive lands in .build/plugins/Swift-DocC/outputs.
#   scripts/docs.sh            build and check
#   scripts/docs.sh --preview  also serve it at http://localhost:8080/documentation/nukecore
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Every target a library product names, from the manifest, so a new product is not forgotten;
# each needs its catalogue.
args=()
while read -r target dir; do
    [ -f "$dir/$target.docc/$target.md" ] || { echo "docs: $target has no catalogue ($dir/$target.docc/$target.md)" >&2; exit 1; }
    args+=(--target "$target")
done < <(swift package describe --type json | python3 -c '
import json, sys
d = json.load(sys.stdin)
names = {t for p in d["products"] if "library" in p["type"] for t in p["targets"]}
for t in sorted(d["targets"], key=lambda t: t["name"]):
    if t["name"] in names: print(t["name"], t["path"])')
swift package generate-documentation "${args[@]}" --warnings-as-errors

find .build -type d -name symbolgraph -prune -exec rm -rf {} + 2>/dev/null || true
swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs=$(find .build -path '*symbolgraph/NukeCore*.symbols.json' | head -20)
[ -n "$graphs" ] || { echo "docs: no NukeCore symbol graph was written" >&2; exit 1; }
python3 - $graphs <<'PY'
import json, sys
# A public symbol declared in NukeCore's sources (it has a location) needs a doc comment;
# inherited and synthesized members (no location) document themselves.
missing = []
for path in sys.argv[1:]:
    for symbol in json.load(open(path))["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        if "location" not in symbol or symbol.get("docComment"):
            continue
        where = symbol["location"]["uri"].split("/Sources/")[-1]
        missing.append(f'{where}:{symbol["location"]["position"]["line"] + 1}: {".".join(symbol["pathComponents"])}')
for line in sorted(set(missing)):
    print("undocumented:", line, file=sys.stderr)
if missing:
    sys.exit(f"docs: {len(set(missing))} public NukeCore symbols have no doc comment")
print("docs: every public NukeCore symbol is documented")
PY

if [ "${1:-}" = --preview ]; then
    swift package --disable-sandbox preview-documentation --target NukeCore
fi
