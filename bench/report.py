#!/usr/bin/python3
"""Joins the JSON lines of bench/run.sh (tconv's programs and torch_ref.py) into the
side-by-side tables of bench/README.md (Markdown on stdout).

  report.py RESULTS.jsonl

"speedup" is reference ms / tconv ms: above 1, tconv is faster.
"""
import json
import re
import statistics
import sys

# Fields that say how busy the machine was: a merged figure keeps their worst value.
WORST_FIELDS = ("load", "others_cpu")


def merge_rounds(rows):
    """run.sh measures everything in several alternating rounds (the machine's speed drifts by
    tens of percent over minutes): one figure per (bench, case, impl, threads), each number the
    median over the rounds, the load figures the worst, and "rounds" their count."""
    merged, order = {}, []
    for r in rows:
        if r.get("bench") in ("machine", "info") or str(r.get("bench")).startswith("target_"):
            order.append(r)  # bench_targets.py's rows: targets_sections takes them per round
            continue
        key = (r.get("bench"), r.get("case"), r.get("impl"), r.get("threads"), r.get("nodes"))
        if key not in merged:
            merged[key] = []
            order.append(key)
        merged[key].append(r)
    out = []
    for item in order:
        if isinstance(item, dict):
            out.append(item)
            continue
        group = merged[item]
        row = dict(group[0])
        for field, value in group[0].items():
            values = [g[field] for g in group if isinstance(g.get(field), (int, float))
                      and not isinstance(g.get(field), bool)]
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not values:
                continue
            row[field] = max(values) if field in WORST_FIELDS else statistics.median(values)
        row["rounds"] = len(group)
        times = [g["ms"] for g in group if isinstance(g.get("ms"), (int, float))]
        if times:
            row["ms_min"] = min(times)
        out.append(row)
    return out


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return merge_rounds(rows)


def first(rows, **match):
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def find_impl(rows, bench, case, threads, prefix):
    for r in rows:
        if (r.get("bench") == bench and r.get("case") == case and r.get("threads") == threads
                and str(r.get("impl", "")).startswith(prefix)):
            return r
    return None


def fmt_ms(r, gflops=False):
    if not r:
        return "n/a"
    s = "%.2f" % r["ms"] if r["ms"] >= 10 else "%.3f" % r["ms"] if r["ms"] >= 0.01 else \
        "%.4f" % r["ms"]
    if gflops and "gflops" in r:
        s += " (%.0f)" % r["gflops"]
    return s


def met(ok):
    return "n/a" if ok is None else ("yes" if ok else "**no**")


QUIET_OTHERS = 0.3  # multi-thread figures are judged only when other processes used less CPU
QUIET_LOAD = 0.5  # the same, for old result files without others_cpu


def met_threads(ok, threads, *records):
    """Like met(), but a multi-thread comparison measured while other processes held a core is
    reported as not judged: neither side had the cores it asked for."""
    records = [r for r in records if r]
    if ok is None or threads <= 1 or not records:
        return met(ok)
    if all(r.get("others_cpu", -1) >= 0 for r in records):
        busy = max(r["others_cpu"] for r in records)
        if busy >= QUIET_OTHERS:
            return "not judged (other processes used %.1f cores)" % busy
        return met(ok)
    loads = [r.get("load", 0.0) for r in records]
    if max(loads) >= QUIET_LOAD:
        return "not judged (load %.1f)" % max(loads)
    return met(ok)


def header(rows):
    machines = [r for r in rows if r.get("bench") == "machine"]
    infos = [r for r in rows if r.get("bench") == "info"]
    out = []
    if machines:
        m = machines[0]
        out.append("Machine: %s, %d cores (%s), Linux %s. Run started %s." %
                   (m["cpu"], m["cores"], m["isa_flags"].strip(), m["kernel"], m["date"]))
        loads = ", ".join("%.2f" % r["load"] for r in machines)
        out.append("1-min load average at start and end: %s (it counts the benchmark's own "
                   "threads)." % loads)
        figures = [r for r in rows if "others_cpu" in r
                   and not str(r.get("bench")).startswith("target_")]
        rounds = max([r.get("rounds", 1) for r in rows
                      if r.get("bench") in ("kernel", "model", "ort") and r.get("impl") == "tconv"]
                     or [1])
        if figures:
            out.append("Each kernel and model figure is the median over %d alternating rounds "
                       "(tconv, then onnxruntime, then PyTorch, then again). Other processes kept "
                       "at most %.2f "
                       "cores busy while any figure was timed (/proc/stat minus the benchmark's "
                       "own CPU time)." % (rounds, max(r["others_cpu"] for r in figures)))
    blases = sorted({r["blas"] for r in infos})
    if infos:
        out.append("PyTorch %s (Debian python3-torch, BLAS_INFO=%s); BLAS libraries measured: %s. "
                   "Threads: torch.set_num_threads + OPENBLAS_NUM_THREADS/OMP_NUM_THREADS, "
                   "checked with torch.get_num_threads() = %s." %
                   (infos[0]["torch"], ",".join(infos[0]["blas_info"]), "; ".join(blases),
                    "/".join(str(r["threads"]) for r in infos)))
    ort = next((r for r in rows if r.get("bench") == "ort" and r.get("impl") != "tconv"), None)
    if ort:
        out.append("%s (npm onnxruntime-node, node %s): CPU provider, graph optimizations 'all', "
                   "intra-op threads as in the table, inter-op threads 1, sequential execution. "
                   "Timed inside node around `await session.run(feeds)`, subtracting nothing: "
                   "the figure includes onnxruntime-node's JavaScript wrapper (one setImmediate "
                   "hop, feeds checked, outputs wrapped)." % (ort["impl"], ort.get("node", "?")))
    isa = first(rows, bench="kernel", impl="tconv") or first(rows, bench="ort", impl="tconv")
    if isa:
        out.append("tconv: default build (no BLAS), GEMM micro-kernel selected at run time: %s." %
                   isa["isa"])
    return out


def kernel_table(rows):
    threads = sorted({r["threads"] for r in rows if r.get("bench") == "kernel"})
    out = ["| figure | threads | tconv ms (GFLOP/s) | reference | reference ms (GFLOP/s) | "
           "speedup | goal | met |", "|---|---|---|---|---|---|---|---|"]
    ct, fc = "workloadA_convtranspose", "workloadA_forward_conv"
    for t in threads:
        tc = find_impl(rows, "kernel", ct, t, "tconv")
        tf = find_impl(rows, "kernel", fc, t, "tconv")
        ob = find_impl(rows, "kernel", ct, t, "torch+OpenBLAS")
        nb = find_impl(rows, "kernel", ct, t, "torch+reference")
        dnn = find_impl(rows, "kernel", fc, t, "torch-oneDNN")
        specs = [
            ("ConvTranspose, workload A", tc, ob, "> 1 (faster than PyTorch+OpenBLAS)" if t == 1
             else "(reported)", (lambda s: s > 1) if t == 1 else None),
            ("ConvTranspose, workload A", tc, nb, "(reported)", None),
            ("ConvTranspose, workload A", tc, dnn,
             ">= 0.67 (within 1.5x of oneDNN's forward conv)" if t == 1 else "(reported)",
             (lambda s: s >= 1 / 1.5) if t == 1 else None),
            ("Conv (forward, same FLOPs)", tf, dnn, "(reported)", None),
        ]
        for name, mine, ref, goal, check in specs:
            if not mine or not ref:
                continue
            speed = ref["ms"] / mine["ms"]
            out.append("| %s | %d | %s | %s | %s | %.2f | %s | %s |" %
                       (name, t, fmt_ms(mine, True), ref["impl"].replace("torch", "PyTorch"),
                        fmt_ms(ref, True), speed, goal, met(check(speed) if check else None)))
    return out


def model_table(rows):
    out = ["| model | threads | tconv ms | PyTorch+OpenBLAS ms | speedup | goal | met |",
           "|---|---|---|---|---|---|---|"]
    cases = []
    for r in rows:
        if r.get("bench") == "model" and r.get("impl") == "tconv":
            cases.append((r["case"], r["threads"]))
    for case, t in cases:
        mine = find_impl(rows, "model", case, t, "tconv")
        ref = find_impl(rows, "model", case, t, "torch+OpenBLAS") or \
            find_impl(rows, "model", case, t, "torch")
        if not ref:
            out.append("| %s | %d | %s | n/a | | | |" % (case, t, fmt_ms(mine)))
            continue
        speed = ref["ms"] / mine["ms"]
        out.append("| %s | %d | %s | %s | %.2f | >= 1 | %s |" %
                   (case.replace("_b", ", batch "), t, fmt_ms(mine), fmt_ms(ref), speed,
                    met_threads(speed >= 1, t, mine, ref)))
    return out


ORT_LABELS = {
    "convT_256to128_32x32": "ConvTranspose 256->128 ch, 32x32, k4 s2 p1 (1.07 GFLOP)",
    "workloadA_convT": "ConvTranspose workload A, 64->32 ch, 64x64, k4 s2 p1 (268 MFLOP)",
    "floor_identity": "floor: one Identity on 1 float (per-run overhead; not a goal)",
    "linknet_paper": "LinkNet at the paper's widths, 1x3x256x256 (bench/run.sh --paper)",
    "erfnet_paper": "ERFNet at the paper's widths and blocks, 1x3x128x256 (--paper)",
    "encodec_paper": "EnCodec's 24 kHz SEANet decoder, 1 s (--paper)",
}


def case_label(case):
    return ORT_LABELS.get(case, "models/" + case)


def ort_label(case, ref):
    label = case_label(case)
    if ref.get("model") == "legalized":
        label += " (onnxruntime runs it as tconv-import legalized it)"
    return label


def mib(kib):
    return kib / 1024.0


def rss(r):
    """Peak RSS in MiB, and how much of it the model added to the bare process."""
    if r.get("peak_rss_kib", -1) < 0:
        return "n/a"
    return "%.1f (+%.1f)" % (mib(r["peak_rss_kib"]), mib(r["peak_rss_kib"] - r["base_rss_kib"]))


def ort_pairs(rows, threads):
    pairs = []
    for r in rows:
        if r.get("bench") == "ort" and r.get("impl") == "tconv" and r["threads"] == threads:
            ref = next((o for o in rows if o.get("bench") == "ort" and o.get("impl") != "tconv"
                        and o["case"] == r["case"] and o["threads"] == threads), None)
            pairs.append((r, ref))
    return pairs


def ort_table(rows, threads):
    out = ["| workload | tconv ms | onnxruntime ms | ratio | ratio of min over rounds | "
           "tconv peak RSS MiB (+model) | onnxruntime peak RSS MiB (+model) | busy | >= 1 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for mine, ref in ort_pairs(rows, threads):
        if not ref:
            out.append("| %s | %s | n/a | | | %s | | %.2f | |" %
                       (case_label(mine["case"]), fmt_ms(mine),
                        rss(mine), mine.get("others_cpu", -1)))
            continue
        ratio = ref["ms"] / mine["ms"]
        ratio_min = ref["ms_min"] / mine["ms_min"]
        busy = max(mine.get("others_cpu", -1), ref.get("others_cpu", -1))
        out.append("| %s | %s | %s | %.2f | %.2f | %s | %s | %.2f | %s |" %
                   (ort_label(mine["case"], ref), fmt_ms(mine), fmt_ms(ref), ratio, ratio_min,
                    rss(mine), rss(ref), busy, met_threads(ratio >= 1, threads, mine, ref)))
    return out


def is_goal(r):
    return not r["case"].startswith("floor_")  # the per-run overhead row is not a goal


def ort_gaps(rows):
    """The workloads where tconv is slower than onnxruntime (ratio below 1), with the gap."""
    out = []
    threads = sorted({r["threads"] for r in rows if r.get("bench") == "ort"})
    for t in threads:
        for mine, ref in ort_pairs(rows, t):
            if ref and is_goal(mine) and ref["ms"] < mine["ms"]:
                out.append("- %s, %d thread%s: tconv %s ms, onnxruntime %s ms: ratio %.2f, "
                           "tconv %.0f%% slower (%.3f ms)" %
                           (ort_label(mine["case"], ref), t, "s" if t > 1 else "",
                            fmt_ms(mine), fmt_ms(ref), ref["ms"] / mine["ms"],
                            100.0 * (mine["ms"] / ref["ms"] - 1), mine["ms"] - ref["ms"]))
    return out or ["- none: tconv at least as fast on every workload and thread count"]


def ort_rss_gaps(rows):
    """Issue 17's memory goal: tconv's peak RSS at most onnxruntime's on the same workload."""
    out = []
    for t in sorted({r["threads"] for r in rows if r.get("bench") == "ort"}):
        for mine, ref in ort_pairs(rows, t):
            if (not ref or not is_goal(mine)
                    or min(mine.get("peak_rss_kib", -1), ref.get("peak_rss_kib", -1)) < 0):
                continue
            own = mine["peak_rss_kib"] - mine["base_rss_kib"]
            other = ref["peak_rss_kib"] - ref["base_rss_kib"]
            if mine["peak_rss_kib"] > ref["peak_rss_kib"] or own > other:
                out.append("- %s, %d threads: tconv %s MiB, onnxruntime %s MiB" %
                           (ort_label(mine["case"], ref), t, rss(mine), rss(ref)))
    return out or ["- none: tconv's peak RSS is below onnxruntime's on every workload and thread "
                   "count, both as a whole process and counting only what the model added"]


def thread_slowdowns(rows):
    """Issue 17's goal "no model slower with more threads than with one", for tconv."""
    out = []
    for mine, _ in ort_pairs(rows, 1):
        for r in rows:
            if (r.get("bench") == "ort" and r.get("impl") == "tconv" and r["case"] == mine["case"]
                    and is_goal(r) and r["threads"] > 1 and r["ms"] > mine["ms"]):
                out.append("- %s: %s ms with %d threads, %s ms with 1 (busy %.2f)" %
                           (case_label(r["case"]), fmt_ms(r),
                            r["threads"], fmt_ms(mine), r.get("others_cpu", -1)))
    return out or ["- none: every workload is at least as fast with more threads"]


def ort_sections(rows):
    threads = sorted({r["threads"] for r in rows if r.get("bench") == "ort"})
    sections = []
    for t in threads:
        sections.append(("### Side by side with onnxruntime, %d thread%s (median latency; "
                         "ratio = onnxruntime ms / tconv ms, above 1: tconv faster)" %
                         (t, "s" if t > 1 else ""), ort_table(rows, t)))
    if threads:
        sections.append(("### Where tconv is slower than onnxruntime (ratio below 1.0)",
                         ort_gaps(rows)))
        sections.append(("### Where tconv is slower with more threads than with one",
                         thread_slowdowns(rows)))
        sections.append(("### Where tconv's peak RSS is above onnxruntime's", ort_rss_gaps(rows)))
    return sections


def legalized_table(rows):
    out = ["| case | rewritten nodes | original ms | legalized ms | legalized / original | "
           "goal | met |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("bench") != "legalized":
            continue
        out.append("| %s | %d | %.3f | %.3f | %.3f | <= 1.05 | %s |" %
                   (r["case"], r["rewritten"], r["original_ms"], r["legalized_ms"], r["ratio"],
                    met(r["ratio"] <= 1.05)))
    return out


def passes_table(rows):
    out = ["| nodes | rewritten | shape-infer ms | legalize ms | dce ms | default pipeline ms | "
           "us/node (pipeline) | goal | met |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("bench") != "passes":
            continue
        big = r["nodes"] >= 100000
        out.append("| %d | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %s | %s |" %
                   (r["nodes"], r["rewritten"], r["shape_infer_ms"], r["legalize_ms"],
                    r["dce_ms"], r["pipeline_ms"], r["us_per_node"],
                    "legalize < 1000 ms" if big else "(linear: flat us/node)",
                    met(r["legalize_ms"] < 1000) if big else "n/a"))
    return out

# bench_targets.py (bench/run.sh --targets): each backend target's output against the original.
TARGET_ORDER = ["tensorrt", "tflite", "coreml", "qnn", "ethos-u", "rknn", "tidl", "conv-only"]
TARGET_LIMIT = 1.2  # issue 21: the converted form at most 20% slower, in either runtime
RUNTIMES = ("tconv", "onnxruntime")


def target_case_label(case):
    return case if case in ORT_LABELS or case.startswith(("convT_", "workloadA_", "floor_")) \
        else "models/" + case


def target_ratios(rows, case, variant, runtime):
    """(original ms, converted ms, ratio, busy, rounds, original's kind, ratio of minima): the ms
    the medians over rounds, the ratio the median over rounds of converted / original measured
    in the same round, the last the ratio of each side's fastest round (on a busy machine the
    round least disturbed by other processes)."""
    times = [r for r in rows if r.get("bench") == "target_time" and r["case"] == case
             and r["runtime"] == runtime]
    orig = {r["round"]: r for r in times if r["variant"] == "original"}
    conv = {r["round"]: r for r in times if r["variant"] == variant}
    rounds = sorted(set(orig) & set(conv))
    if not rounds:
        return None
    ratios = [conv[k]["ms"] / orig[k]["ms"] for k in rounds]
    busy = max(max(orig[k].get("others_cpu", -1), conv[k].get("others_cpu", -1)) for k in rounds)
    return (statistics.median(orig[k]["ms"] for k in rounds),
            statistics.median(conv[k]["ms"] for k in rounds), statistics.median(ratios), busy,
            len(rounds), orig[rounds[0]].get("model", "original"),
            min(conv[k]["ms"] for k in rounds) / min(orig[k]["ms"] for k in rounds))


def ops_text(conversion):
    """tconv-import's op counts before -> after; empty when only attributes or weights changed
    (a dilation folded into W, a pad form)."""
    return conversion["ops"] or "same ops (attributes, weights)"


def short_reason(reason):
    """tconv-import's refusal, shortened: what it says of the first node it names, and how many
    nodes it names (the full message is in the results file)."""
    text = re.sub(r"^\S+: (pass [\w-]+: )?", "", reason)
    text = re.sub(r"^not lowered: ", "", text)
    nodes = len(set(re.findall(r"node '([^']*)'", reason)))
    m = re.search(r"node '[^']*' \(#\d+, \w+\): ", text)
    if not m:
        return text
    rest = text[m.end():].replace(m.group(0), "")  # the same node named again
    cut = re.search(r";\s*(?=node ')|(?<=\)) (?=node ')", rest)  # where the next node starts
    return "%s%s%s (%d node%s named)" % (text[:m.start()], m.group(0), rest[:cut.start()]
                                          if cut else rest, nodes, "" if nodes == 1 else "s")


def target_matrix(rows, conversions, targets):
    """One row per workload, one column per target: "tconv ratio / onnxruntime ratio"."""
    cases = []
    for c in conversions:
        if c["case"] not in cases:
            cases.append(c["case"])
    out = ["| workload | " + " | ".join("`%s`" % t for t in targets) + " |",
           "|---|" + "---|" * len(targets)]
    for case in cases:
        cells = []
        for t in targets:
            c = next((c for c in conversions if c["case"] == case and c["target"] == t), None)
            if c is None:
                cells.append("")
            elif c["status"] == "unchanged":
                cells.append("=")
            elif c["status"] == "refused":
                cells.append("refused")
            else:
                parts = []
                for rt in RUNTIMES:
                    res = target_ratios(rows, case, c["variant"], rt)
                    parts.append("n/a" if res is None else
                                 ("**%.2f**" if res[2] > TARGET_LIMIT else "%.2f") % res[2])
                cells.append(" / ".join(parts))
        out.append("| %s | %s |" % (target_case_label(case), " | ".join(cells)))
    return out


def target_sections(rows):
    conversions = [r for r in rows if r.get("bench") == "target_conversion"]
    if not conversions:
        return []
    mismatches = [r for r in rows if r.get("bench") == "target_mismatch"]
    targets = [t for t in TARGET_ORDER if any(r["target"] == t for r in conversions)]
    targets += sorted({r["target"] for r in conversions} - set(targets))
    times = [r for r in rows if r.get("bench") == "target_time"]
    intro = []
    if times:
        intro.append("Each ms figure is the median over %d alternating rounds (in a round, per "
                     "workload: tconv's original and converted models, then onnxruntime's, the "
                     "order reversed every other round), %s thread(s); ratio = converted ms / "
                     "original ms, the median over rounds of the ratio within a round (above 1: "
                     "the converted model is slower). Other processes kept up to %.2f cores "
                     "busy while a figure was timed (median %.2f)." %
                     (max(r["round"] for r in times),
                      "/".join(str(t) for t in sorted({r["threads"] for r in times})),
                      max(r.get("others_cpu", -1) for r in times),
                      statistics.median(r.get("others_cpu", -1) for r in times)))
    sections = [("## Backend targets: converted vs original (issue 21, cost)", intro)]
    over = []
    summary = ["| target | converted (timed) | unchanged | refused | tconv median | tconv worst | "
               "onnxruntime median | onnxruntime worst |", "|---|---|---|---|---|---|---|---|"]
    for t in targets:
        table = ["| workload | rewritten | ops before -> after | tconv original ms | tconv "
                 "converted ms | tconv ratio (of minima) | onnxruntime original ms | onnxruntime "
                 "converted ms | onnxruntime ratio (of minima) | busy |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        mine = [r for r in conversions if r["target"] == t]
        per_runtime = {rt: [] for rt in RUNTIMES}
        for c in mine:
            if c["status"] != "converted":
                continue
            cells, busy = [], -1.0
            for rt in RUNTIMES:
                res = target_ratios(rows, c["case"], c["variant"], rt)
                bad = next((m for m in mismatches if m["case"] == c["case"]
                            and m["runtime"] == rt and m["variant"] in (c["variant"], "original")),
                           None)
                if res is None:
                    cells += ["n/a", "n/a", "**fails its golden check**" if bad else "n/a"]
                    continue
                o_ms, c_ms, ratio, b, _, kind, ratio_min = res
                busy = max(busy, b)
                per_runtime[rt].append((ratio, c["case"]))
                mark = ("**%.2f**" if ratio > TARGET_LIMIT else "%.2f") % ratio
                mark += " (%.2f)" % ratio_min
                cells += [fmt_ms({"ms": o_ms}) + (" (legalized)" if kind == "legalized" else ""),
                          fmt_ms({"ms": c_ms}), mark]
                if ratio > TARGET_LIMIT:
                    over.append("- `%s`, %s, %s: %.2f, of minima %.2f (original %s ms, converted "
                                "%s ms; %s)" %
                                (t, target_case_label(c["case"]), rt, ratio, ratio_min,
                                 fmt_ms({"ms": o_ms}), fmt_ms({"ms": c_ms}), ops_text(c)))
            table.append("| %s | %d | %s | %s | %.2f |" % (target_case_label(c["case"]),
                                                          c["rewritten"], ops_text(c),
                                                          " | ".join(cells), busy))
        cols = []
        for rt in RUNTIMES:
            got = per_runtime[rt]
            if got:
                worst = max(got)
                cols += ["%.2f" % statistics.median(r for r, _ in got),
                         "%.2f (%s)" % (worst[0], worst[1])]
            else:
                cols += ["n/a", "n/a"]
        n = {st: sum(1 for c in mine if c["status"] == st)
             for st in ("converted", "unchanged", "refused")}
        summary.append("| `%s` | %d | %d | %d | %s |" % (t, n["converted"], n["unchanged"],
                                                         n["refused"], " | ".join(cols)))
        line = ["`%s`: %d converted and timed, %d unchanged (nothing rewritten: %s), %d "
                "refused." % (t, n["converted"], n["unchanged"],
                              ", ".join(c["case"] for c in mine if c["status"] == "unchanged")
                              or "none", n["refused"])]
        line += ["%s: ratio median %s, worst %s." % (rt, cols[2 * i], cols[2 * i + 1])
                 for i, rt in enumerate(RUNTIMES)]
        sections.append(("### Target `%s`" % t, table + [""] + [" ".join(line)]))
    sections.append(("### Summary per target (ratio = converted / original; worst in brackets)",
                     summary))
    sections.append(("### All ratios (converted / original; tconv / onnxruntime; **bold** above "
                     "%.1f; `=` unchanged: nothing rewritten)" % TARGET_LIMIT,
                     target_matrix(rows, conversions, targets)))
    sections.append(("### Converted forms more than 20%% slower than the original (ratio > %.1f)"
                     % TARGET_LIMIT, over or ["- none"]))
    refused = ["- `%s`, %s: %s" % (r["target"], target_case_label(r["case"]),
                                   short_reason(r["reason"]))
               for r in conversions if r["status"] == "refused"]
    sections.append(("### Refused conversions", refused or ["- none"]))
    bad = ["- %s, %s, %s model (targets: %s): %s" %
           (target_case_label(m["case"]), m["runtime"], m["variant"],
            ", ".join(m.get("targets", [])) or "-", m["message"]) for m in mismatches]
    sections.append(("### Golden check failures (wrong output or refused by the runtime)",
                     bad or ["- none: every timed model matched the golden outputs"]))
    return sections


def main():
    rows = load(sys.argv[1])
    sections = [("", header(rows))] + ort_sections(rows) + [
        ("### Kernels (workload A: X 1x64x64x64, W 64x32x4x4, stride 2, pads 1; 268 MFLOP)",
         kernel_table(rows)),
        ("### Whole models beside PyTorch (median latency)", model_table(rows)),
        ("### Legalized graph vs original in tconv's runtime (1 thread)", legalized_table(rows)),
        ("### Pass scaling (generated chain, ConvTranspose SAME_UPPER + Relu)",
         passes_table(rows))] + target_sections(rows)
    for title, lines in sections:
        if title.startswith("###") and len(lines) == 2 and lines[1].startswith("|---"):
            continue  # a table with no rows: that part was not run (run.sh --ort-only)
        if title:
            print(title)
            print()
        print("\n".join(lines))
        print()


main()
