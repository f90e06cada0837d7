#!/usr/bin/env bash
# Every Markdown file that the documentation names (docs/FAULTS.md,
# README.md, ...) exists in the source tree.
#   md_references_test.sh SOURCE_DIR
set -u
root=$1
cd "$root" || exit 1
mapfile -t docs < <(find . -name '*.md' -not -path './build*' -not -path './.git/*' -not -path './.venv/*' \
                      -not -path '*/node_modules/*' | sort)
declare -A present
for f in "${docs[@]}"; do present[$(basename "$f")]=1; done
missing=0
for f in "${docs[@]}"; do
  # Names ending in .md, outside web addresses.
  while read -r ref; do
    name=$(basename "$ref")
    if [[ -z "${present[$name]:-}" ]]; then
      echo "$f names $ref, which is not in the source tree"
      missing=$((missing + 1))
    fi
  done < <(sed -E 's#https?://[^ )>]*##g' "$f" | grep -oE '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' | sort -u)
done
if [[ $missing -ne 0 ]]; then
  echo "$missing missing file(s)"
  exit 1
fi
echo "every .md file named in ${#docs[@]} documents exists"
