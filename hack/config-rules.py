#!/usr/bin/env python3
# Prints the XValidation markers that refuse, at kubectl apply time, config
# variants the server cannot apply as written (api/v1alpha1/benchmarkrun_types.go:
# the "variant" markers go above ConfigVariant, the "database" markers above
# DatabaseSpec). Edit the checks here and paste the output: CEL regexes are
# unreadable once escaped twice. `make verify-generated` checks the pasted
# markers still match this script.
import sys

# Rules every engine shares, on ConfigVariant (self is the variant): the error
# path is the variant's inline field itself. (name, whole-text regex, regex
# finding the offending line, explanation)
variant = [
    ("option before the first section",
     r'^([ \t\r]*([#;][^\n]*)?\n)*[ \t]*[^ \t\r\n#;!\[](?s:.*)\n[ \t]*\[',
     r'(?m)^[ \t]*[^ \t\r\n#;!\[][^\r\n]*',
     "sets an option before the first [section] header, where the server does not read it"),
    ("bad character in a name",
     r'(?m)^[ \t]*[A-Za-z0-9_.$-]*[^A-Za-z0-9_.$\- \t\r\n=#;!\[]',
     r'(?m)^[ \t]*[A-Za-z0-9_.$-]*[^A-Za-z0-9_.$\- \t\r\n=#;!\[][^\r\n]*',
     "is not a setting: write name = value (no colon; names are letters, digits, _ . -)"),
    ("section header not closed",
     r'(?m)^[ \t]*\[([^\]\n]*$|[^\]\n]*\][ \t]*[^ \t\r\n#;])',
     r'(?m)^[ \t]*\[([^\]\n]*$|[^\]\n]*\][ \t]*[^ \t\r\n#;])[^\r\n]*',
     "is not a section header: write [name] alone on its line"),
]

# MAX_CONFIGS is DatabaseSpec.Configs' maxItems.
MAX_CONFIGS = 8

setting = r'(?m)^[ \t]*[A-Za-z0-9_.-]'
# Engine-specific rules, on DatabaseSpec (self is the database, whose engine
# they need). (engines, condition on c, regex finding the line, explanation)
database = [
    (["mysql", "mariadb"],
     "c.inline.matches(r'%s') && !c.inline.matches(r'(?m)^[ \\t]*\\[')" % setting,
     setting + r'[^\r\n]*',
     "sets an option before any [section] header; the server reads options only under a section such as [mysqld]"),
    (["mysql", "mariadb"],
     r"c.inline.matches(r'(?m)^[ \t]*[A-Za-z0-9_.-]+[ \t]+[^ \t\r\n=#]')",
     r'(?m)^[ \t]*[A-Za-z0-9_.-]+[ \t]+[^ \t\r\n=#][^\r\n]*',
     "is not an option line: write name or name=value, not a space-separated value"),
    (["mysql"],
     "c.inline.matches(r'%s') && c.inline.matches(r'(?m)^[ \\t]*\\[') && !c.inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$')" % setting,
     r'(?m)^[ \t]*\[[^\r\n]*',
     "opens the first section, but no section is one the mysql server reads ([mysqld] or [server]): its options would be ignored"),
    (["mariadb"],
     "c.inline.matches(r'%s') && c.inline.matches(r'(?m)^[ \\t]*\\[') && !c.inline.matches(r'(?mi)^[ \\t]*\\[(mysqld|server|mariadb|mariadbd|client-server|galera)(-[0-9.]+)?\\][ \\t\\r]*(#.*)?$')" % setting,
     r'(?m)^[ \t]*\[[^\r\n]*',
     "opens the first section, but no section is one the mariadb server reads ([mysqld], [server], [mariadb] or [mariadbd]): its options would be ignored"),
    (["postgres"],
     r"c.inline.matches(r'(?m)^[ \t]*\[')",
     r'(?m)^[ \t]*\[[^\r\n]*',
     "is a [section] header, which postgresql.conf does not have: write name = value lines"),
    (["postgres"],
     r"c.inline.matches(r'(?m)^[ \t]*[A-Za-z_][A-Za-z0-9_.$]*[ \t]*(=[ \t]*)?(#.*)?\r?$')",
     r'(?m)^[ \t]*[A-Za-z_][A-Za-z0-9_.$]*[ \t]*(=[ \t]*)?(#.*)?\r?$',
     "sets no value: write name = value"),
    (["postgres"],
     r"""c.inline.matches(r"(?m)^[ \t]*[A-Za-z_][A-Za-z0-9_.$]*[ \t]*(=[ \t]*)?'([^'\\\n]|'{2}|\\.)*$")""",
     r"""(?m)^[ \t]*[A-Za-z_][A-Za-z0-9_.$]*[ \t]*(=[ \t]*)?'([^'\\\n]|'{2}|\\.)*$""",
     "has a quoted value that is not closed on its line"),
]


def raw(s):
    # A regex with a single quote goes in a double-quoted raw string: gofmt
    # turns two single quotes in a doc comment into a typographic quote.
    assert "''" not in s, "write '{2} for two quotes: gofmt rewrites them in comments"
    return ('r"' + s + '"') if "'" in s else ("r'" + s + "'")


def goquote(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def marker(rule, msg, field=None):
    m = "// +kubebuilder:validation:XValidation:rule=%s,messageExpression=%s" % (goquote(rule), goquote(msg))
    if field:
        m += ",fieldPath=%s" % goquote(field)
    return m


def variant_markers():
    out = []
    for _, rx, rl, expl in variant:
        rule = "!has(self.inline) || !self.inline.matches(%s)" % raw(rx)
        msg = "'line \"' + self.inline.find(%s) + '\" %s'" % (raw(rl), expl)
        out.append(marker(rule, msg, ".inline"))
    return out


def database_markers():
    # One rule per check and list index: a messageExpression that iterates
    # over configs exceeds the API server's cost estimate by far, while one
    # that indexes a single variant stays within it, and naming the index is
    # the point of the message.
    out = []
    for engines, cond, rl, expl in database:
        eng = "[" + ",".join("'%s'" % e for e in engines) + "]"
        for i in range(MAX_CONFIGS):
            c = "self.configs[%d]" % i
            rule = ("!(self.engine in %s) || !has(self.configs) || size(self.configs) <= %d || !has(%s.inline) || !(%s)"
                    % (eng, i, c, cond.replace("c.inline", c + ".inline")))
            msg = "'configs[%d].inline: line \"' + %s.inline.find(%s) + '\" %s'" % (i, c, raw(rl), expl)
            out.append(marker(rule, msg))
    return out


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    if which == "--check":
        # Every marker this script prints must stand in the types file.
        text = open(sys.argv[2]).read()
        missing = [m for m in variant_markers() + database_markers() if m not in text]
        if missing:
            sys.exit("%s: %d config-variant markers differ from hack/config-rules.py; paste its output" % (sys.argv[2], len(missing)))
        sys.exit(0)
    if which in ("variant", "all"):
        print("\n".join(variant_markers()))
    if which in ("database", "all"):
        print("\n".join(database_markers()))
