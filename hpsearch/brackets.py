"""Hyperband's bracket arithmetic (Li et al., JMLR 2018, Algorithm 1) in integers, and the plan it implies."""

from __future__ import annotations

from dataclasses import dataclass

from tftk.user_input import UserInputError

__all__ = ["Rung", "Bracket", "hyperband_brackets", "single_rung_bracket", "plan_budget", "format_plan", "budget_line"]


@dataclass(frozen=True)
class Rung:
    """One successive-halving round: `n` trials each trained to `resource` iterations in total."""

    n: int
    resource: int


@dataclass(frozen=True)
class Bracket:
    """One successive-halving run; `s` is its id (Hyperband's bracket index, 0 for a random search)."""

    s: int
    rungs: tuple[Rung, ...]

    @property
    def n_configs(self) -> int:
        """Configs sampled at the bottom rung."""
        return self.rungs[0].n

    def keep(self, rung: int) -> int:
        """How many trials of `rung` are promoted to the next one (0 for the top rung)."""
        return self.rungs[rung + 1].n if rung + 1 < len(self.rungs) else 0

    @property
    def iterations(self) -> int:
        """Training iterations the bracket costs when promoted trials continue from their checkpoint."""
        total, previous = 0, 0
        for rung in self.rungs:
            total += rung.n * (rung.resource - previous)
            previous = rung.resource
        return total


def _s_max(max_resource: int, eta: int) -> int:
    """floor(log_eta R) without floating point: the largest s with eta**s <= R."""
    s = 0
    while eta ** (s + 1) <= max_resource:
        s += 1
    return s


def _check(max_resource: int, eta: int) -> None:
    if not isinstance(max_resource, int) or max_resource < 1:
        raise UserInputError(f"max_resource must be a positive integer (training iterations), got {max_resource!r}")
    if not isinstance(eta, int) or eta < 2:
        raise UserInputError(f"eta must be an integer >= 2, got {eta!r}")


def hyperband_brackets(max_resource: int, eta: int = 3) -> list[Bracket]:
    """Hyperband's brackets, s = s_max down to 0, with n = ceil(B/R * eta^s/(s+1)) and r_i = R eta^(i-s).

    Resources are whole iterations: r_i = floor(R * eta^i / eta^s) (at least 1), exact when R is a
    power of eta; rung i holds n_i = floor(n / eta^i) trials.
    """
    _check(max_resource, eta)
    s_max = _s_max(max_resource, eta)
    brackets = []
    for s in range(s_max, -1, -1):
        n = -(-(s_max + 1) * eta ** s // (s + 1))  # ceil((s_max+1) eta^s / (s+1)); B/R = s_max+1
        rungs = tuple(Rung(n // eta ** i, max(1, max_resource * eta ** i // eta ** s)) for i in range(s + 1))
        brackets.append(Bracket(s, rungs))
    return brackets


def single_rung_bracket(n_configs: int, max_resource: int) -> Bracket:
    """A random search (or a grid) as one bracket: every config trained to `max_resource`, none dropped."""
    if not isinstance(n_configs, int) or n_configs < 1:
        raise UserInputError(f"the number of configs must be a positive integer, got {n_configs!r}")
    _check(max_resource, 2)
    return Bracket(0, (Rung(n_configs, max_resource),))


def plan_budget(brackets: list[Bracket]) -> tuple[int, int]:
    """(trials sampled, training iterations) of a whole plan."""
    return sum(b.n_configs for b in brackets), sum(b.iterations for b in brackets)


def format_plan(brackets: list[Bracket], title: str) -> str:
    """The dry-run plan: one line per bracket with (configs, resource) per rung, then the budget line."""
    lines = [f"{title}:"]
    for bracket in brackets:
        rungs = "  ".join(f"{r.n} x {r.resource}" for r in bracket.rungs)
        lines.append(f"  bracket s={bracket.s}: {rungs}  ({bracket.iterations} iterations)")
    lines.append(budget_line(brackets))
    return "\n".join(lines)


def budget_line(brackets: list[Bracket]) -> str:
    """The line every search prints before it starts."""
    trials, iterations = plan_budget(brackets)
    return f"budget: {len(brackets)} bracket(s), {trials} trials, {iterations} training iterations"
