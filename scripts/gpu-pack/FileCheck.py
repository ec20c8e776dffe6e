#!/usr/bin/env python3
"""A small FileCheck for device packs (scripts/gpu-pack.sh): GPU machines
have no LLVM tools, and the GPU lit tests (test/e2e/gpu) pipe kiln-run into
FileCheck. Python 3 standard library only.

  FileCheck CHECK_FILE [--check-prefix P | --check-prefixes P,Q]
            [--input-file FILE] [--allow-empty]

Directives: PREFIX:, PREFIX-NEXT:, PREFIX-SAME:, PREFIX-NOT:, PREFIX-EMPTY:,
with LLVM FileCheck's rules: literal text with {{regex}} parts, horizontal
whitespace runs match any run of spaces and tabs, leading and trailing
whitespace of a pattern ignored; CHECK matches after the previous match,
NEXT on the line after it, SAME on its line, NOT between the previous match
and the next (or the end). Anything else LLVM's FileCheck has (-DAG,
-LABEL, -COUNT, [[VAR]], options) is refused with an error, never ignored.
Exit code 0 when every directive holds, 1 otherwise (2 for a usage error).
"""
import re
import sys

KINDS = ("NEXT", "SAME", "NOT", "EMPTY")
UNSUPPORTED = ("DAG", "LABEL", "COUNT")


def usage(msg):
    sys.stderr.write("FileCheck: error: %s\n" % msg)
    sys.exit(2)


def to_regex(pattern):
    """A pattern's text as a Python regex."""
    out, i = [], 0
    while i < len(pattern):
        j = pattern.find("{{", i)
        if j < 0:
            j = len(pattern)
        literal = pattern[i:j]
        if "[[" in literal:
            usage("pattern variables ([[...]]) are not supported: %r" % pattern)
        out.append(r"[ \t]+".join(re.escape(p) for p in re.split(r"[ \t]+", literal)))
        if j == len(pattern):
            break
        k = pattern.find("}}", j + 2)
        if k < 0:
            usage("unterminated {{ in %r" % pattern)
        out.append("(?:%s)" % pattern[j + 2:k])
        i = k + 2
    return re.compile("".join(out))


def parse_checks(path, prefixes):
    alt = "|".join(re.escape(p) for p in prefixes)
    directive = re.compile(r"(?<![\w-])(%s)(?:-([A-Z]+)(?:-\d+)?)?:(.*)$" % alt)
    checks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = directive.search(line.rstrip("\n"))
            if not m:
                continue
            kind = m.group(2) or ""
            if kind in UNSUPPORTED:
                usage("%s:%d: %s-%s is not supported by this FileCheck"
                      % (path, number, m.group(1), kind))
            if kind and kind not in KINDS:
                continue  # e.g. "GPU-LIKE:" in prose; LLVM ignores it too
            text = m.group(3).strip()
            if kind != "EMPTY" and not text:
                usage("%s:%d: empty %s pattern" % (path, number, m.group(0).split(":")[0]))
            checks.append((kind, text, to_regex(text) if kind != "EMPTY" else None,
                           "%s:%d" % (path, number), m.group(0).split(":")[0]))
    return checks


def main(argv):
    args = argv[1:]
    prefixes, check_file, input_file, allow_empty = [], None, None, False
    i = 0
    while i < len(args):
        a = args[i]
        value = None
        for flag in ("--check-prefix", "--check-prefixes", "--input-file"):
            if a == flag and i + 1 < len(args):
                value, i = (flag, args[i + 1]), i + 1
            elif a.startswith(flag + "="):
                value = (flag, a[len(flag) + 1:])
        if value:
            if value[0] == "--input-file":
                input_file = value[1]
            else:
                prefixes += [p for p in value[1].split(",") if p]
        elif a == "--allow-empty":
            allow_empty = True
        elif a.startswith("-"):
            usage("unsupported option %s" % a)
        elif check_file is None:
            check_file = a
        else:
            usage("unexpected argument %s" % a)
        i += 1
    if check_file is None:
        usage("no check file given")
    prefixes = prefixes or ["CHECK"]
    checks = parse_checks(check_file, prefixes)
    if not checks:
        usage("no check strings found with prefix%s %s"
              % ("es" if len(prefixes) > 1 else "", ", ".join(p + ":" for p in prefixes)))
    if input_file:
        with open(input_file, encoding="utf-8", errors="replace") as f:
            text = f.read()
    else:
        text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    if not text and not allow_empty:
        sys.stderr.write("FileCheck: error: empty input from %s\n" % (input_file or "<stdin>"))
        return 1

    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(pos):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def line_end(n):
        return line_starts[n + 1] - 1 if n + 1 < len(line_starts) else len(text)

    def fail(where, name, pattern, pos, why):
        n = line_of(min(pos, len(text)))
        sys.stderr.write("%s: error: %s: %s\n%s: %s\n" % (where, name, why, name, pattern))
        sys.stderr.write("input, from line %d on:\n" % (n + 1))
        for k in range(n, min(n + 8, len(line_starts))):
            sys.stderr.write("  %4d | %s\n" % (k + 1, text[line_starts[k]:line_end(k)]))
        return 1

    pos, prev_line, nots = 0, None, []
    for kind, pattern, regex, where, name in checks:
        if kind == "NOT":
            nots.append((pattern, regex, where, name))
            continue
        start = pos
        if kind == "EMPTY":
            n = (prev_line + 1) if prev_line is not None else 0
            if n >= len(line_starts) or text[line_starts[n]:line_end(n)] != "":
                return fail(where, name, "(an empty line)", line_starts[min(n, len(line_starts) - 1)],
                            "the next line is not empty")
            m_start, m_end, m_line = line_starts[n], line_starts[n], n
        else:
            if kind == "NEXT" and prev_line is not None:
                # LLVM searches on from the previous match, then insists on
                # the next line; searching the next line alone is the same.
                n = prev_line + 1
                if n >= len(line_starts):
                    return fail(where, name, pattern, len(text), "no next line in the input")
                m = regex.search(text, max(pos, line_starts[n]), line_end(n))
                if not m:
                    later = regex.search(text, pos)
                    return fail(where, name, pattern, line_starts[n],
                                "expected string not found on the next line" +
                                (" (it is on line %d)" % (line_of(later.start()) + 1) if later else ""))
            elif kind == "SAME" and prev_line is not None:
                m = regex.search(text, pos, line_end(prev_line))
                if not m:
                    return fail(where, name, pattern, line_starts[prev_line],
                                "expected string not found on the same line")
            else:
                m = regex.search(text, pos)
                if not m:
                    return fail(where, name, pattern, pos, "expected string not found in input")
            m_start, m_end, m_line = m.start(), m.end(), line_of(m.start())
        for npattern, nregex, nwhere, nname in nots:
            bad = nregex.search(text, start, m_start)
            if bad:
                return fail(nwhere, nname, npattern, bad.start(), "excluded string found in input")
        nots = []
        pos, prev_line = m_end, m_line
    for npattern, nregex, nwhere, nname in nots:
        bad = nregex.search(text, pos)
        if bad:
            return fail(nwhere, nname, npattern, bad.start(), "excluded string found in input")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
