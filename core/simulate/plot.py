"""Histograms of simulated totals: a PNG file (matplotlib, written atomically) or unicode bars; and the
PNG plumbing other commands' plots share (`pyplot`, `save_png`; the CLI checks the path: `cli.outputs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DicecupError, install_extra
from ..fileio import write_atomic_with
from ..locales import N_, Phrase

__all__ = [
    "pyplot",
    "save_png",
    "terminal_histogram",
    "write_distribution_png",
    "write_match_png",
    "write_png",
    "write_risk_png",
]

_EIGHTHS = " ▏▎▍▌▋▊▉█"


def pyplot(without: str = "for a terminal histogram") -> Any:
    """matplotlib's pyplot on the file-only Agg backend; DicecupError saying how to install it (or do `without`)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise DicecupError(
            Phrase(
                N_("--plot needs matplotlib: {install} (or run without --plot {without})"),
                install=install_extra("plot"),
                without=without,
            )
        ) from None
    return plt


def save_png(fig: Any, path: Path) -> None:
    """Write a matplotlib figure as a PNG atomically (the old file or the new, never half of one; never in
    place of what is not a regular file): `fileio.write_atomic_with`, as every other file dicecup writes."""
    try:
        write_atomic_with(path, lambda fh: fig.savefig(fh, format="png"))
    except OSError as exc:
        raise DicecupError(
            Phrase(N_("cannot write the plot {path}: {why}"), path=repr(str(path)), why=exc.strerror or str(exc))
        ) from None


def write_png(path: Path, summary: dict[str, Any]) -> None:
    """Draw the histogram of `summary` (from `stats.summarize`) with mean and percentiles, atomically."""
    plt = pyplot()
    hist = summary["histogram"]
    edges, counts, width = hist["edges"], hist["counts"], hist["bin_width"]
    games = summary["games"]
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=110)
    try:
        ax.bar(
            edges[:-1],
            [100.0 * c / games for c in counts],
            width=width,
            align="edge",
            color="#4c72b0",
            edgecolor="white",
            linewidth=0.6,
            label="games",
        )
        ax.axvline(summary["mean"], color="#c44e52", linewidth=1.8, label=f"mean {summary['mean']:.2f}")
        ax.axvline(
            summary["median"], color="#dd8452", linewidth=1.4, linestyle="--", label=f"median {summary['median']:g}"
        )
        p = summary["percentiles"]
        for key, style in (("5", ":"), ("95", ":")):
            ax.axvline(p[key], color="#55a868", linewidth=1.2, linestyle=style)
        ax.plot([], [], color="#55a868", linestyle=":", label=f"5th-95th percentile {p['5']:.4g} to {p['95']:.4g}")
        ax.set_xlabel(f"final score (bins of {width})")
        ax.set_ylabel("share of games (%)")
        opts = ", ".join(f"{k}={v}" for k, v in summary["options"].items())
        ax.set_title(
            f"{summary['variant']}{f' ({opts})' if opts else ''}: {summary['strategy']} strategy, "
            f"{games:,} games, sd {summary['sd']:.2f}"
        )
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False)
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)


def write_distribution_png(path: Path, dist: Any, title: str) -> None:
    """Draw an exact score distribution (`distribution.Distribution`): each score's probability, with its
    mean, median, mode and 5th-95th percentiles, and P(score >= t) on a second axis; atomically."""
    plt = pyplot("for the tables alone")
    lo, hi = dist.quantile(0.001), dist.quantile(0.999)
    keep = (dist.scores >= lo) & (dist.scores <= hi)
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=110)
    try:
        ax.bar(dist.scores[keep], 100.0 * dist.probs[keep], width=1.0, color="#4c72b0", label="probability")
        ax.axvline(dist.mean, color="#c44e52", linewidth=1.8, label=f"mean {dist.mean:.2f} (sd {dist.sd:.2f})")
        ax.axvline(dist.median, color="#dd8452", linewidth=1.4, linestyle="--", label=f"median {dist.median}")
        ax.axvline(dist.mode, color="#8172b3", linewidth=1.2, linestyle="-.", label=f"mode {dist.mode}")
        p5, p95 = dist.quantile(0.05), dist.quantile(0.95)
        for x in (p5, p95):
            ax.axvline(x, color="#55a868", linewidth=1.2, linestyle=":")
        ax.plot([], [], color="#55a868", linestyle=":", label=f"5th-95th percentile {p5} to {p95}")
        ax.set_xlabel(f"final score (0.1th to 99.9th percentile: {lo} to {hi})")
        ax.set_ylabel("probability (%)")
        tail = ax.twinx()
        tail.plot(dist.scores[keep], 100.0 * dist.tail()[keep], color="#937860", linewidth=1.2)
        tail.set_ylabel("P(score >= t) (%)", color="#937860")
        tail.set_ylim(0, 100)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False, loc="upper left")
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)


def write_risk_png(path: Path, rows: list[dict[str, Any]], title: str) -> None:
    """Draw `dicecup risk`'s figures against theta: the mean with a band of one sd either side, the median,
    the 5th and 95th percentiles and the certainty equivalent; atomically."""
    plt = pyplot("for the table alone")
    x = [r["theta"] for r in rows]
    mean = [r["mean"] for r in rows]
    sd = [r["sd"] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=110)
    try:
        ax.fill_between(x, [m - s for m, s in zip(mean, sd, strict=True)], [m + s for m, s in zip(mean, sd, strict=True)],
                        color="#4c72b0", alpha=0.15, label="mean ± sd")  # fmt: skip
        ax.plot(x, mean, color="#4c72b0", marker="o", linewidth=1.8, label="mean")
        ax.plot(x, [r["percentiles"]["50"] for r in rows], color="#dd8452", linestyle="--", label="median")
        for key, name, color in (("95", "95th percentile", "#55a868"), ("5", "5th percentile", "#c44e52")):
            ax.plot(x, [r["percentiles"][key] for r in rows], color=color, linestyle=":", marker=".", label=name)
        ax.plot(x, [r["certainty_equivalent"] for r in rows], color="#8172b3", linewidth=1.0, label="certainty equiv.")
        ax.axvline(0, color="#999999", linewidth=0.8)
        ax.set_xlabel("theta (< 0 careful, > 0 bold)")
        ax.set_ylabel("final score")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the lines, never on them
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)


def write_target_png(path: Path, ts: Any, target: Any, mean: Any, title: str, at: int | None = None) -> None:
    """Draw target play's curve P(final score >= t) next to the mean-optimal player's (arrays over `ts`), the
    gain between them on a second axis, and the target `at` marked; atomically."""
    plt = pyplot("for the tables alone")
    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=110)
    try:
        ax.plot(ts, 100.0 * target, color="#c44e52", linewidth=1.8, label="target play (each t maximised)")
        ax.plot(ts, 100.0 * mean, color="#4c72b0", linewidth=1.4, linestyle="--", label="mean-optimal play")
        if at is not None:
            ax.axvline(at, color="#55a868", linewidth=1.2, linestyle=":", label=f"target {at}")
        ax.set_xlabel("t (final score)")
        ax.set_ylabel("P(final score >= t) (%)")
        ax.set_ylim(0, 100)
        gain = ax.twinx()
        gain.plot(ts, 100.0 * (target - mean), color="#937860", linewidth=1.0)
        gain.set_ylabel("gain of target play (percentage points)", color="#937860")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, loc="upper right")
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)


def _bar(fraction: float, cells: int) -> str:
    eighths = round(fraction * cells * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def terminal_histogram(hist: dict[str, Any], games: int, cells: int = 40) -> list[str]:
    """One line per bin: range, a unicode bar scaled to the largest bin, count and share."""
    edges, counts, width = hist["edges"], hist["counts"], hist["bin_width"]
    top = max(counts) or 1
    label_w = max(len(f"{edges[i]}-{edges[i + 1] - 1}") for i in range(len(counts)))
    lines = []
    for i, c in enumerate(counts):
        label = f"{edges[i]}" if width == 1 else f"{edges[i]}-{edges[i + 1] - 1}"
        lines.append(
            f"{label:>{label_w}} │{_bar(c / top, cells):<{cells}} {c:>{len(str(top))}} {100 * c / games:5.1f}%"
        )
    return lines


def write_match_png(path: Path, rows: list[dict[str, Any]], players: int, title: str) -> None:
    """Draw `dicecup match`'s figures: each player's share of the wins with its 95% confidence interval, the
    fair share 1/players marked; atomically."""
    plt = pyplot("for the table alone")
    names = [f"{i + 1}. {r['player']}" for i, r in enumerate(rows)]
    share = [r["win_share"] for r in rows]
    err = [[s - r["ci95"][0] for s, r in zip(share, rows, strict=True)],
           [r["ci95"][1] - s for s, r in zip(share, rows, strict=True)]]  # fmt: skip
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        ax.bar(names, share, yerr=err, capsize=6, color="#4c72b0", alpha=0.85, label="share of the wins (95% CI)")
        ax.axhline(1 / players, color="#c44e52", linestyle="--", linewidth=1.0, label=f"fair share 1/{players}")
        for x, r in enumerate(rows):
            ax.annotate(f"{r['win_share']:.3f}\nmean {r['mean_score']:.1f}", (x, r["ci95"][1]), ha="center",
                        va="bottom", fontsize=8, xytext=(0, 3), textcoords="offset points")  # fmt: skip
        ax.set_ylabel("share of the wins (ties shared)")
        ax.set_ylim(0, min(1.0, max(r["ci95"][1] for r in rows) * 1.3 + 0.02))
        ax.set_title(title)
        ax.grid(alpha=0.3, axis="y")
        ax.legend(frameon=False, loc="lower right")
        fig.tight_layout()
        save_png(fig, path)
    finally:
        plt.close(fig)
