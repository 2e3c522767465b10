#!/bin/sh
# Makes the verdicts RULE.txt declares from the raw CSVs: every set of the default at each point
# (v1b and d1 from ../../2026-12-04/h2-path, then s01 .. s10 here).
cd "$(dirname "$0")"
A=../../2026-12-04/h2-default/agree.py
P=../../2026-12-04/h2-path
S=$(for i in 01 02 03 04 05 06 07 08 09 10; do printf ' s%s.csv:load' "$i"; done)
python3 $A tls 10x10 $P/v1b.csv:load $P/d1.csv:base $S > verdict-tls-10x10.txt
python3 $A tls 10x100 $P/v1b.csv:load $S > verdict-tls-10x100.txt
