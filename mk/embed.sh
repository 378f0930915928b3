#!/bin/sh
# embed.sh - a file's bytes as a C array, for a program that serves it: embed.sh NAME FILE > NAME.c
set -eu
name=$1 file=$2
echo "/* $name - $(basename "$file"), made by mk/embed.sh at build time: edit that file. */"
echo "#include <stddef.h>"
echo "const unsigned char ${name}[] = {"
od -An -v -tx1 "$file" | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1, /g' -e 's/^/\t/' -e 's/, $/,/'
echo "0 };"
echo "const size_t ${name}_len = sizeof(${name}) - 1;"
