#!/usr/bin/env python3
"""check-junit.py: check a JUnit XML report of fusefarm (docs/ci.md).

usage: check-junit.py FILE [--tests N] [--failures N] [--errors N]
                      [--suites N] [--failed CLASSNAME/NAME]...
                      [--errored CLASSNAME/NAME]... [--passed CLASSNAME/NAME]...
                      [--message CLASSNAME/NAME=TEXT]...

Parses FILE with xml.etree (so it is well-formed XML) and checks the
structure CI test reporters read, by hand (no JUnit XSD ships with
Debian): <testsuites> holding <testsuite name tests failures errors
skipped time>, each holding an optional <properties> and <testcase
classname name time> elements with at most one <failure message type> or
<error message type>; every suite's counts are its testcases', the
root's the suites' sums; times are numbers >= 0.  Then the expectations
given.  Exit 0 when all hold; else 1 with one line per problem.
"""
import sys
import xml.etree.ElementTree as ET

problems = []


def bad(msg):
    problems.append(msg)


def number(el, attr, kind=int):
    v = el.get(attr)
    if v is None:
        bad(f"<{el.tag} name={el.get('name')!r}>: no {attr}")
        return 0
    try:
        n = kind(v)
    except ValueError:
        bad(f"<{el.tag} name={el.get('name')!r}>: {attr}={v!r} is not a number")
        return 0
    if n < 0:
        bad(f"<{el.tag} name={el.get('name')!r}>: {attr}={v} < 0")
    return n


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, args = argv[1], argv[2:]
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        bad(f"root is <{root.tag}>, expected <testsuites>")
    cases = {}
    sums = {"tests": 0, "failures": 0, "errors": 0}
    suites = root.findall("testsuite")
    for child in root:
        if child.tag != "testsuite":
            bad(f"<testsuites> holds <{child.tag}>")
    for s in suites:
        if not s.get("name"):
            bad("a <testsuite> without a name")
        got = {"tests": 0, "failures": 0, "errors": 0}
        for c in s:
            if c.tag == "properties":
                for p in c:
                    if p.tag != "property" or p.get("name") is None or p.get("value") is None:
                        bad(f"suite {s.get('name')!r}: bad <properties> entry <{p.tag}>")
                continue
            if c.tag != "testcase":
                bad(f"suite {s.get('name')!r} holds <{c.tag}>")
                continue
            got["tests"] += 1
            key = f"{c.get('classname')}/{c.get('name')}"
            if not c.get("name") or not c.get("classname"):
                bad(f"suite {s.get('name')!r}: testcase without name or classname")
            number(c, "time", float)
            outcome = [x for x in c if x.tag in ("failure", "error", "skipped")]
            if len(outcome) > 1:
                bad(f"{key}: {len(outcome)} outcomes")
            for x in outcome:
                if x.tag in ("failure", "error"):
                    got[x.tag + "s"] += 1
                    if not x.get("message") or not x.get("type"):
                        bad(f"{key}: <{x.tag}> without message or type")
            cases[key] = outcome[0] if outcome else None
        for k in got:
            n = number(s, k)
            if n != got[k]:
                bad(f"suite {s.get('name')!r}: {k}={n}, its testcases say {got[k]}")
            sums[k] += got[k]
        number(s, "skipped")
        number(s, "time", float)
    for k in sums:
        if number(root, k) != sums[k]:
            bad(f"<testsuites> {k}={root.get(k)}, its suites say {sums[k]}")
    number(root, "time", float)

    i = 0
    while i < len(args):
        opt = args[i]
        val = args[i + 1] if i + 1 < len(args) else None
        i += 2
        if val is None:
            bad(f"{opt}: needs a value")
        elif opt in ("--tests", "--failures", "--errors"):
            if root.get(opt[2:]) != val:
                bad(f"{opt[2:]}={root.get(opt[2:])}, expected {val}")
        elif opt == "--suites":
            if len(suites) != int(val):
                bad(f"{len(suites)} suites, expected {val}")
        elif opt in ("--failed", "--errored", "--passed"):
            want = {"--failed": "failure", "--errored": "error", "--passed": None}[opt]
            if val not in cases:
                bad(f"no testcase {val} (have: {', '.join(sorted(cases))})")
            elif (cases[val].tag if cases[val] is not None else None) != want:
                have = cases[val].tag if cases[val] is not None else "passed"
                bad(f"{val}: {have}, expected {want or 'passed'}")
        elif opt == "--message":
            key, _, text = val.partition("=")
            x = cases.get(key)
            if x is None:
                bad(f"{key}: no failure or error to hold {text!r}")
            elif text not in x.get("message", ""):
                bad(f"{key}: message {x.get('message')!r} lacks {text!r}")
        else:
            bad(f"unknown option {opt}")
    for p in problems:
        print(f"check-junit: {path}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
