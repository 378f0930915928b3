#!/bin/sh
# man.sh - a program's man page from its own --help, so the two never differ: man.sh PROGRAM SECTION-1-SUMMARY > PROGRAM.1
set -u
prog=$1 summary=$2
name=$(basename "$prog")
help=$("$prog" --help) || { echo "man.sh: $prog --help failed" >&2; exit 1; }
version=$("$prog" --version | awk '{ print $NF }')
# roff: a backslash doubled, a leading dot or quote escaped
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
cat <<MAN
.TH $(echo "$name" | tr a-z A-Z) 1 "" "EventSpace $version" "EventSpace"
.SH NAME
$name \\- $summary
.SH SYNOPSIS
.nf
$(echo "$help" | sed -n '/^usage:/,/^[^ ]/p' | sed '$!b; /^usage:/!d' | sed 's/^usage: //' | esc)
.fi
.SH DESCRIPTION
The text of
.B $name \\-\\-help
follows.
.PP
.nf
$(echo "$help" | esc)
.fi
.SH SEE ALSO
EventSpace's README and the READMEs of its folders (pastset, paths, pathmaps,
collectors, scopes, monitors, archive).
MAN
