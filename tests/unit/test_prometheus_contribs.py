#!/usr/bin/python3
"""test_prometheus_contribs.py - the Prometheus rules and the Grafana
dashboard of contribs/prometheus/ (issue #43), with no Prometheus server:

1. `promtool check rules` and `promtool test rules` on the rules and their
   unit tests (slurm-energy.rules.test.yml);
2. every PromQL expression of the dashboard (panel targets and template
   variables, Grafana's $variables replaced) goes through Prometheus' own
   parser (`promtool check rules` on a rule file made of them);
3. every metric name in those expressions and in the rules is one the
   exporter serves (or, in a rule, one an earlier rule records): the names come from the exporter's man page
   (doc/man/slurm-energy-exporter.8, METRICS) when it is there, else from
   EXPORTER_METRICS below (the names issue #43 fixed before the exporter
   landed).  The names are found by a small PromQL tokenizer (promtool
   2.42 has no command that prints a parse tree), itself checked first on
   expressions whose names are known;
4. under make check, `make install` (its target for these files alone,
   into a scratch DESTDIR) puts the rules, their tests, the dashboard and
   the README in $(datadir)/slurm-energy/prometheus, byte for byte.

Run by make check (about 0.3 s), or alone: python3
tests/unit/test_prometheus_contribs.py.  Exit 0 when every check passes,
1 otherwise; promtool missing is a failure (contribs/install-deps.sh
installs Debian's prometheus), never a skip.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.environ.get("srcdir", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")))
DIR = os.path.join(TOP, "contribs", "prometheus")
RULES = os.path.join(DIR, "slurm-energy.rules.yml")
RULES_TEST = os.path.join(DIR, "slurm-energy.rules.test.yml")
DASHBOARD = os.path.join(DIR, "grafana-slurm-energy.json")
MAN_PAGE = os.path.join(TOP, "doc", "man", "slurm-energy-exporter.8")

EXPORTER_METRICS = {
    "slurm_energy_node_power_watts",
    "slurm_energy_node_energy_joules_total",
    "slurm_energy_node_max_watts",
    "slurm_energy_meter_state",
    "slurm_energy_meter_last_sample_age_seconds",
    "slurm_energy_gpu_power_watts",
    "slurm_energy_gpu_energy_joules_total",
    "slurm_energy_job_energy_joules_total",
    "slurm_energy_exporter_slurmd_up",
    "slurm_energy_exporter_scrape_duration_seconds",
}

# PromQL words that are never a metric name (keywords, operators, the
# modifiers that take a label list).
KEYWORDS = {"and", "or", "unless", "atan2", "bool", "offset", "by",
            "without", "on", "ignoring", "group_left", "group_right", "inf",
            "nan"}
# Aggregations: followed by '(' or by a 'by'/'without' label list.
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar",
                "count", "count_values", "bottomk", "topk", "quantile"}
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left",
               "group_right"}
TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+\b)
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<punct>=~|!~|!=|==|<=|>=|[-+*/%^<>=(){},@])
""", re.X)

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def tokens(expr):
    """[(kind, text)] of a PromQL expression; ValueError on a character
    no PromQL token starts with."""
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError("cannot read %r at %r" % (expr, expr[pos:]))
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
        pos = m.end()
    return out


def metric_names(expr):
    """The metric names an expression selects: identifiers outside label
    matchers and label lists that are not a function or aggregation (an
    identifier followed by '(', or an aggregation followed by by/without),
    nor a keyword; plus {__name__="..."}."""
    toks, names, depth, i = tokens(expr), set(), 0, 0
    while i < len(toks):
        kind, text = toks[i]
        after = toks[i + 1][1] if i + 1 < len(toks) else None
        if text == "{":
            depth += 1
        elif text == "}":
            depth -= 1
        elif depth and kind == "ident" and text == "__name__":
            names.add(toks[i + 2][1][1:-1])     # __name__ = "metric"
            i += 2
        elif kind == "ident" and text.lower() in LABEL_LISTS and after == "(":
            i = toks.index(("punct", ")"), i)   # past the label list
        elif depth == 0 and kind == "ident" and after != "(" and \
                text.lower() not in KEYWORDS and not (
                    text.lower() in AGGREGATIONS and
                    str(after).lower() in ("by", "without")):
            names.add(text)
        i += 1
    return names


GRAFANA_VARS = [
    (re.compile(r"\$__(range|rate_interval|interval)\b"), "5m"),
    (re.compile(r"\$\{?__\w+\}?"), "1"),
    (re.compile(r"\$\{(\w+)(:\w+)?\}|\$(\w+)"), ".*"),
]
LABEL_VALUES = re.compile(r"^\s*label_values\((?:(.*),)?\s*\w+\s*\)\s*$", re.S)


def promql_of_grafana(text):
    """A Grafana query as PromQL: its variables replaced (durations by 5m,
    others by '.*', which fit where the dashboard uses them: inside =~
    matchers), label_values(EXPR, label) by EXPR (None when it names no
    series)."""
    m = LABEL_VALUES.match(text)
    if m:
        text = m.group(1)
        if text is None:
            return None
    for pattern, value in GRAFANA_VARS:
        text = pattern.sub(value, text)
    return text


def dashboard_queries(dash):
    """[(where, query)] of every target's expr and every query variable."""
    out = []

    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                if "expr" in target:
                    out.append(("panel %r %s" % (panel.get("title"),
                                                target.get("refId")),
                                target["expr"]))
            walk(panel.get("panels", []))
    walk(dash.get("panels", []))
    for var in dash.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            q = var.get("query")
            q = q.get("query") if isinstance(q, dict) else q
            out.append(("variable $%s" % var["name"], q))
    return out


def rule_exprs(path):
    """[(where, expr)] of a rule file, read by promtool's own YAML (no
    PyYAML here): `promtool check rules` has accepted it, and the file
    keeps every expr after 'expr:' as a plain or folded scalar."""
    out, lines = [], open(path, encoding="utf-8").read().split("\n")
    for n, line in enumerate(lines):
        m = re.match(r"^(\s*)expr:\s*(>-?|\|-?)?\s*(.*)$", line)
        if not m:
            continue
        if m.group(2):      # a block: the lines indented deeper
            body = []
            for more in lines[n + 1:]:
                if more.strip() and len(more) - len(more.lstrip()) <= \
                        len(m.group(1)):
                    break
                body.append(more.strip())
            text = " ".join(body).strip()
        else:
            text = m.group(3)
        out.append(("%s:%d" % (os.path.basename(path), n + 1), text))
    return out


def exporter_metrics():
    """(names, source): the exporter's man page when present, else the
    issue's list."""
    if not os.path.exists(MAN_PAGE):
        return EXPORTER_METRICS, "issue #43's list (no %s yet)" % MAN_PAGE
    text = open(MAN_PAGE, encoding="utf-8").read().replace("\\_", "_")
    names = set(re.findall(r"(?<![a-z0-9_])slurm_energy_[a-z_]*[a-z]", text))
    return names, MAN_PAGE


def family(name):
    """A counter's family name (OpenMetrics names the family without
    _total, a man page may too)."""
    return name[:-len("_total")] if name.endswith("_total") else name


def unknown_names(names, known):
    """The names of *names* whose family is not among *known*'s."""
    families = {family(k) for k in known}
    return {n for n in names if family(n) not in families}


def promtool(*args):
    return subprocess.run(["promtool", *args], cwd=DIR,
                          capture_output=True, text=True)


def check_tokenizer():
    cases = {
        'sum by (account, node) (increase(a_total{node=~"x", b="on"}[1h]))':
            {"a_total"},
        "max by (node) (p) > on (node) group_left (user) max by (node) (q)":
            {"p", "q"},
        'topk(10, m1) or rate(m2[5m] offset 1h) / ignoring(gpu) m3 and bool':
            {"m1", "m2", "m3"},
        '{__name__="by_name", node="n"} * 2.5e3 + level:metric:sum':
            {"by_name", "level:metric:sum"},
        'label_replace(up, "dst", "$1", "src", "(.*)")': {"up"},
        "sum without (gpu) (max_over_time(g[1h:1m])) + sum": {"g", "sum"},
    }
    for expr, want in cases.items():
        got = metric_names(expr)
        check(got == want, "tokenizer: %s -> %s" % (expr, sorted(got)))


def check_promql_parses(queries):
    """Every query through Prometheus' parser: one recording rule each."""
    tmp = tempfile.mkdtemp(prefix="se-promql-")
    try:
        path = os.path.join(tmp, "dashboard.rules.yml")
        with open(path, "w") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, (_, q) in enumerate(queries):
                f.write("      - record: dashboard:q%d\n        expr: %s\n"
                        % (i, json.dumps(q)))
        p = subprocess.run(["promtool", "check", "rules", path],
                           capture_output=True, text=True)
        check(p.returncode == 0, "promtool parses the dashboard's %d "
              "queries%s" % (len(queries), "" if p.returncode == 0 else
                             ":\n" + p.stdout + p.stderr))
    finally:
        shutil.rmtree(tmp)


INSTALLED = ("slurm-energy.rules.yml", "slurm-energy.rules.test.yml",
             "grafana-slurm-energy.json", "README.md")


def check_install_tree():
    """make's install target of contribs/prometheus' files, into a scratch
    DESTDIR, run in the build tree make check runs us in (srcdir set)."""
    if "srcdir" not in os.environ:
        print("---- install tree not checked: run by make check")
        return
    tmp = tempfile.mkdtemp(prefix="se-prom-install-")
    try:
        p = subprocess.run(["make", "-s", "install-dist_prometheusDATA",
                            "DESTDIR=" + tmp], capture_output=True,
                           text=True)
        check(p.returncode == 0, "make install-dist_prometheusDATA%s" % (
            "" if p.returncode == 0 else ": " + p.stdout + p.stderr))
        found = {}
        for d, _, files in os.walk(tmp):
            for f in files:
                found[os.path.relpath(os.path.join(d, f), tmp)] = \
                    os.path.join(d, f)
        for name in INSTALLED:
            where = [k for k in found
                     if k.endswith("/share/slurm-energy/prometheus/" + name)]
            same = len(where) == 1 and open(found[where[0]], "rb").read() \
                == open(os.path.join(DIR, name), "rb").read()
            check(same, "installed as %s, as in contribs/prometheus"
                  % (where or ["nothing: " + name]))
        check(len(found) == len(INSTALLED), "nothing else installed: %s"
              % sorted(found))
    finally:
        shutil.rmtree(tmp)


def main():
    if not shutil.which("promtool"):
        print("FAIL promtool not found: install Debian's prometheus "
              "(contribs/install-deps.sh)")
        return 1
    p = promtool("check", "rules", os.path.basename(RULES))
    check(p.returncode == 0, "promtool check rules " + p.stdout.strip()
          + p.stderr.strip())
    p = promtool("test", "rules", os.path.basename(RULES_TEST))
    check(p.returncode == 0, "promtool test rules: " + " ".join(
        (p.stdout + p.stderr).split()))
    check_tokenizer()

    known, source = exporter_metrics()
    missing = unknown_names(EXPORTER_METRICS, known)
    check(not missing, "the exporter (%s) serves issue #43's metrics; "
          "missing: %s" % (source, sorted(missing)))
    dash = json.load(open(DASHBOARD, encoding="utf-8"))
    queries = [(w, promql_of_grafana(q))
               for w, q in dashboard_queries(dash)]
    queries = [(w, q) for w, q in queries if q is not None]
    check(len(queries) >= 10, "the dashboard has %d queries" % len(queries))
    check_promql_parses(queries)
    titles = {p.get("title") for p in dash["panels"]}
    for want in ("Node power", "Top jobs by energy", "Energy per account"):
        check(want in titles, "the dashboard has a panel %r" % want)
    recorded = set(re.findall(r"^\s*-?\s*record:\s*(\S+)\s*$",
                              open(RULES, encoding="utf-8").read(), re.M))
    check(len(recorded) >= 4, "the rules record %s" % sorted(recorded))
    for where, q in queries + rule_exprs(RULES):
        names = metric_names(q)
        # a rule may read what an earlier rule records, a dashboard not
        unknown = unknown_names(names, known) - (
            recorded if where.startswith(os.path.basename(RULES)) else set())
        check(names and not unknown, "%s uses %s%s" % (
            where, ", ".join(sorted(names)) or "no metric",
            "; not served by the exporter: %s" % sorted(unknown)
            if unknown else ""))
    # the check above can fail: a name the exporter does not serve
    check(unknown_names(metric_names(
        "ipmi_power_watts + slurm_energy_node_power_watts"), known)
        == {"ipmi_power_watts"}, "an unknown metric is caught")
    check_install_tree()
    print("%d failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
