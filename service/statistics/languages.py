"""One model in several languages: per-language intervals, with the micro and the macro average.

Per language, the bootstrap resamples that language's problems, with a seed derived from the language's
name (adding a language does not move another's). The two averages:

- micro: the mean over all problems of all languages pooled, i.e. sum_g n_g * mean_g / N (bigger
  languages weigh more) -- "how does a random problem go";
- macro: the unweighted mean of the per-language means -- "how well does it do in each language".

Both are reported, labelled, and neither is called "the" average (seeds 000 and 004).

HumanEval-X and MultiPL-E are one set of problems translated: CPP/0 and Go/0 are HumanEval/0. A hard
problem is hard in every language, so the languages' means move together, and resampling each language
on its own (as independent strata) makes the averages' intervals far too narrow. Problems with the same
key (the caller's: the problem id after its language prefix) are therefore one unit: the averages resample
units, and a unit brings its problem in every language. Languages that share no key stay independent
strata; a problem whose key no other language has is a unit of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from service.statistics.bootstrap import derive_seed, resample_means
from service.statistics.groups import GroupResult, group_intervals, joint_group_means, small_group_warnings
from service.statistics.intervals import (
    Interval,
    Method,
    clt_standard_errors,
    column_means,
    effective_problems,
    intervals_from_distribution,
    mean_accelerations,
    rescaled,
)

__all__ = ["LanguageSummary", "Pairing", "language_intervals", "micro_macro", "pairing"]

MICRO_LABEL = "micro average: mean over all problems of all languages pooled (larger languages weigh more)"
MACRO_LABEL = "macro average: unweighted mean of the per-language means (every language weighs the same)"


@dataclass(frozen=True)
class Pairing:
    """Which problems are one problem translated: the units the averages resample."""

    keys: list[str]  # keys present in two languages or more, sorted
    unmatched: dict[str, list[str]]  # language -> its problems whose key no other language has (by problem id)
    units: int  # resampling units of the averages: shared keys plus unmatched problems

    @property
    def joint(self) -> bool:
        """Some problem is in two languages: the averages resample them together."""
        return bool(self.keys)


@dataclass(frozen=True)
class LanguageSummary:
    languages: list[GroupResult]  # sorted by language name; `tag` is the language
    micro: list[Interval]
    macro: list[Interval]
    problems: int
    pairing: Pairing | None = None  # None when no keys were given (every language an independent stratum)
    micro_label: str = MICRO_LABEL
    macro_label: str = MACRO_LABEL
    warnings: list[str] = field(default_factory=list)


def micro_macro(values_by_language: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The point estimates per column: (micro, macro)."""
    blocks = [np.asarray(v, dtype=float) for v in values_by_language.values()]
    pooled = np.concatenate(blocks, axis=0)
    return column_means(pooled), column_means(np.array([column_means(b) for b in blocks]))


def pairing(keys_by_language: Mapping[str, Sequence[str]], ids_by_language: Mapping[str, Sequence[str]]) -> Pairing:
    """The keys shared by two languages or more, and each language's problems whose key is nobody else's."""
    languages_of: dict[str, set[str]] = {}
    for language, keys in keys_by_language.items():
        for key in keys:
            languages_of.setdefault(key, set()).add(language)
    shared = sorted(key for key, languages in languages_of.items() if len(languages) > 1)
    unmatched = {
        language: [i for i, key in zip(ids_by_language[language], keys, strict=True) if len(languages_of[key]) < 2]
        for language, keys in sorted(keys_by_language.items())
    }
    lone = sum(len(ids) for ids in unmatched.values())
    return Pairing(shared, {language: ids for language, ids in unmatched.items() if ids}, len(shared) + lone)


def _pairing_warnings(found: Pairing, names: Sequence[str]) -> list[str]:
    if len(names) < 2:
        return []
    if not found.joint:
        return [
            "no problem id matches across the languages (after the language prefix), so the languages are resampled "
            "as independent strata; if they are translations of one benchmark (CPP/0, Go/0, HumanEval/0 and "
            "HumanEval_0_... are one problem), the averages' intervals are too narrow"
        ]
    return [
        f"{len(ids)} of the {language} problems ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''}) match no "
        "problem of another language by id after the language prefix: each is resampled on its own"
        for language, ids in sorted(found.unmatched.items())
    ]


def language_intervals(
    values_by_language: Mapping[str, np.ndarray], *, resamples: int, confidence: float, seed: int, method: Method,
    keys_by_language: Mapping[str, Sequence[str]] | None = None,
    ids_by_language: Mapping[str, Sequence[str]] | None = None,
) -> LanguageSummary:
    """values_by_language: language -> (problems, columns) per-problem scores in [0, 1] (e.g. pass@k per k).

    keys_by_language: per language, the key of each problem (the same problem translated has the same key
    in every language); ids_by_language names the problems in the pairing (default: the keys).
    """
    if not values_by_language:
        raise ValueError("no language to compare")
    names = sorted(values_by_language)
    blocks = [np.asarray(values_by_language[name], dtype=float) for name in names]
    if any(b.ndim != 2 or b.shape[0] == 0 for b in blocks) or len({b.shape[1] for b in blocks}) != 1:
        raise ValueError("each language needs a (problems, columns) array with at least one problem, same columns")
    found: Pairing | None = None
    units = None
    if keys_by_language is not None:
        keys = {name: [str(k) for k in keys_by_language[name]] for name in names}
        if any(len(keys[name]) != block.shape[0] for name, block in zip(names, blocks, strict=True)):
            raise ValueError("keys_by_language needs one key per problem of each language")
        ids = keys if ids_by_language is None else {name: [str(i) for i in ids_by_language[name]] for name in names}
        found = pairing(keys, ids)
        index: dict[str, int] = {}
        units = np.array([index.setdefault(key, len(index)) for name in names for key in keys[name]], dtype=np.intp)
    values = np.concatenate(blocks, axis=0)
    tags = [[name] for name, block in zip(names, blocks, strict=True) for _ in range(block.shape[0])]
    # Per-language intervals and the macro (stratified, or over units when problems pair up; with the honest
    # handling of languages whose values cannot vary), each language with seed derive_seed(seed, "group:<lang>").
    grouped = group_intervals(
        values, tags, resamples=resamples, confidence=confidence, seed=seed, method=method, units=units
    )
    sizes = np.array([b.shape[0] for b in blocks], dtype=float)
    weights = sizes / sizes.sum()
    if found is not None and found.joint:
        members = np.split(np.arange(values.shape[0]), np.cumsum(sizes.astype(int))[:-1])
        joint = joint_group_means(
            values, members, [weights], units=units, resamples=resamples, seed=derive_seed(seed, "micro:joint")
        )
        columns = values.shape[1]
        micro = intervals_from_distribution(
            joint.distribution[:, 0, :], estimates=joint.estimates[0], standard_errors=joint.standard_errors[0],
            accelerations=joint.accelerations[0], constant=np.all(values == values[0], axis=0),
            first_row=values[0], problems=joint.units, bounded=np.ones(columns, dtype=bool), method=method,
            confidence=confidence, effective=joint.effective[0],
        )
    else:
        # Micro from the same per-language resamples (stratified), weighted by problem counts.
        distribution = sum(
            w * rescaled(resample_means(b, resamples=resamples, seed=derive_seed(seed, f"group:{name}")),
                         column_means(b), b.shape[0])
            for w, name, b in zip(weights, names, blocks, strict=True)
        )
        ses = np.array([clt_standard_errors(b) for b in blocks])
        micro = intervals_from_distribution(
            np.asarray(distribution), estimates=column_means(values),
            standard_errors=np.sqrt(np.sum((weights[:, None] * ses) ** 2, axis=0)),
            accelerations=mean_accelerations(values), constant=np.all(values == values[0], axis=0),
            first_row=values[0], problems=values.shape[0], bounded=np.ones(values.shape[1], dtype=bool),
            method=method, confidence=confidence, effective=effective_problems(values),
        )
    warnings = small_group_warnings({g.tag: g.problems for g in grouped.groups}, tags=False)
    if found is not None:
        warnings += _pairing_warnings(found, names)
    return LanguageSummary(grouped.groups, micro, grouped.macro, values.shape[0], found, warnings=warnings)

