#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (docs/fuzzing.md).

usage: tests/fuzz/make-seeds.py

corpus/spec, corpus/profile and corpus/scenario get the shipped configs
(configs/, configs/profiles/, configs/scenarios/), the built-in texts and
every string literal of the matching unit test that looks like a config
(it has "=" or is empty); corpus/read gets a few fixed pseudo-random byte
strings.  Files are named by the SHA-1 of their content, as libFuzzer
names its own, so running this again adds nothing twice.

It also writes the libFuzzer dictionaries spec.dict, profile.dict and
scenario.dict: the lowercase words their parser's source quotes (keys,
enum values) bare and quoted, and a few libconfig tokens.
"""
import glob
import hashlib
import os
import random
import re

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


def c_strings(path):
    """The string literals of a C file, adjacent ones joined."""
    src = open(path, encoding="utf-8").read()
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    out, cur, end = [], None, None
    for m in LITERAL.finditer(src):
        text = re.sub(r"\\(.)", lambda e: ESCAPES.get(e.group(1), e.group(1)),
                      m.group(1))
        if cur is not None and src[end:m.start()].strip() == "":
            cur += text
        else:
            if cur is not None:
                out.append(cur)
            cur = text
        end = m.end()
    if cur is not None:
        out.append(cur)
    return out


def write(target, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def from_tests(target, *files):
    for f in files:
        for s in c_strings(os.path.join(top, f)):
            if "=" in s and len(s) < 4096:
                write(target, s)


DICT_SOURCES = {
    "spec": ["generators/ff-spec.c", "generators/ff-spec-lv.c",
             "generators/ff-spec-keys.c", "generators/ff-signature.c"],
    "profile": ["serve/ff-profile.c"],
    "scenario": ["runner/ff-scenario.c"],
}
DICT_TOKENS = ["=", ";", ",", "(", ")", "{", "}", "[", "]", '"', "({", "});",
               "#", "//", "/*", "*/", "L", "true", "false", "0x", "1e-20",
               "1e400", "-1", "0", "4294967296", "9223372036854775807L",
               ".5", '"16E"', '"1.5G"', '"512"', '"1s"', '"0.1ms"',
               '"99999999999m"', "@include"]


# Seeds for paths the configs and the unit tests do not take.
EXTRA = {
    "spec": [
        # Over the farm's limit: ff_farm_new rejects it before allocating.
        "blanks = ({ count = 1000000; }, { count = 1000000; });\n",
        # Explicit names, UUIDs and hints everywhere.
        'vgs = ({ name = "vgx"; pvs = 2; devices = ["a", "b"];\n'
        '  pv_uuids = ["wJ1fvV-xxNA-dvRX-wDUP-mNTo-wXFQ-GKLkI5",\n'
        '              "aJ1fvV-xxNA-dvRX-wDUP-mNTo-wXFQ-GKLkI5"];\n'
        '  hints = ["/dev/sda", "/dev/sdb"];\n'
        '  uuid = "bJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5";\n'
        '  lvs = ({ name = "l"; uuid = "cJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5";\n'
        '           size = "8M"; description = "d"; time = 5; }); });\n'
        'orphans = ({ devices = ["o"];\n'
        '  pv_uuids = ["dJ1fvVxxNAdvRXwDUPmNTowXFQGKLkI5"]; });\n',
        # Two metadata areas on small devices, the label in sector 0.
        "orphans = ({ device_size = 69632; pe_start = 36864;\n"
        "  mda_size = 32768; mda_copies = 2; label_sector = 0; });\n",
        'vgs = ({ pvs = 2; device_size = "3M"; extent_size = "1K";\n'
        "  mda_copies = 2; damage = \"duplicate-pv\"; lvs = ({ fill = 1; }); });\n",
    ],
}


def dict_entry(word):
    return '"%s"\n' % word.replace("\\", "\\\\").replace('"', '\\"')


def write_dicts():
    for target, files in DICT_SOURCES.items():
        words = set()
        for f in files:
            src = open(os.path.join(top, f), encoding="utf-8").read()
            words.update(re.findall(r'"([a-z][a-z0-9_/-]{1,40})"', src))
        with open(os.path.join(here, target + ".dict"), "w") as out:
            out.write("# libFuzzer dictionary for fuzz-%s, written by "
                      "make-seeds.py:\n# the words its parser quotes, "
                      "and libconfig tokens.\n" % target)
            for w in sorted(words):
                out.write(dict_entry(w) + dict_entry('"%s"' % w))
            for w in DICT_TOKENS:
                out.write(dict_entry(w))


def main():
    for pattern, target in (("configs/*.conf", "spec"),
                            ("configs/profiles/*.conf", "profile"),
                            ("configs/scenarios/*.conf", "scenario")):
        for path in glob.glob(os.path.join(top, pattern)):
            write(target, open(path, "rb").read())
    write("spec", "")
    write("profile", "")
    write("scenario", "")
    from_tests("spec", "tests/unit/test-spec.c", "tests/unit/test-farm.c",
               "tests/unit/test-thin-snap.c", "tests/unit/test-cache.c",
               "generators/ff-spec.c", "generators/ff-spec-lv.c",
               "generators/ff-spec-keys.c", "generators/ff-builtin.c")
    from_tests("profile", "tests/unit/test-profile.c")
    from_tests("scenario", "tests/unit/test-scenario.c",
               "runner/ff-scenario.c")
    for target, texts in EXTRA.items():
        for text in texts:
            write(target, text)
    rnd = random.Random(1258)
    for n in (1, 8, 16, 32, 64, 64, 128, 128, 256, 256, 512, 1024):
        write("read", bytes(rnd.randrange(256) for _ in range(n)))
    write_dicts()


if __name__ == "__main__":
    main()
