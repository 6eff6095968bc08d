"""Ensemble selection from a library of models (Caruana et al., ICML 2004 and ICDM 2006).

What the paper (section 4) runs in Weka, as a scikit-learn estimator:

1. every library model, on every feature group, is trained by 5-fold *embedded*
   cross-validation: the out-of-fold predictions of its five fold models form its
   hillclimbing column, and the model that scores new hosts is the average of the five
   fold models (Caruana 2006's "cross-validated models": no sixth fit on all data);
2. *library pruning* (Caruana 2006): only the ``prune`` share of the models of best
   out-of-fold AUC enter selection;
3. *bagged selection*: ``n_bags`` times, draw ``bag_fraction`` of the models; in the bag,
   *sorted initialisation* puts in the ``n_init`` models of best out-of-fold AUC, then
   ``n_iterations`` steps of greedy forward selection *with replacement* add the model
   that maximises the AUC of the averaged predictions; the bag's ensemble is the best
   prefix seen during the climb (counts of each model);
4. the final weights are the bags' normalised counts, averaged.

Folds are stratified; with ``groups`` (a registered domain or IP component per host) a
group is never split between folds.  The tree-based families (boosted stumps, trees, bagged
cost-sensitive trees, forests) see each feature cut into ``tree_bins`` quantile bins
(:mod:`spamflow_ensemble.binning`; by default only on tables too large for exact splits).
"""

from __future__ import annotations

import copy
import functools
import math
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import sklearn
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import ThreadpoolController

from spamflow.errors import BadInputError
from spamflow.progress import progress_bar, progress_on
from spamflow_ensemble.binning import bins_for, quantile_edges, to_bins
from spamflow_ensemble.compiled import CompiledEnsemble, compile_ensemble, spam_column
from spamflow_ensemble.compression import fit_mimic
from spamflow_ensemble.fastauc import auc, auc_columns
from spamflow_ensemble.folds import FastStratifiedGroupKFold
from spamflow_ensemble.library import ModelSpec, boosting_prefix, build_library

SCORE_BLOCK = 4096
"""Hosts scored at a time: the shared inputs of 4,096 hosts x 300 features fit in cache, and
the linear models' basis stays ~30 MB (measured: 842 hosts/s against 724 for 20,000 at once)."""

BINNED_FAMILIES = frozenset({"logitboost", "tree", "costtree", "forest", "extratrees"})
"""The families fitted on quantile bins of the features (``tree_bins``): every family whose
models are trees (boosted stumps included), except histogram boosting, which bins itself."""


@dataclass(frozen=True)
class Candidate:
    """A library model on one feature group: what selection chooses among."""

    name: str
    family: str
    group: str
    columns: tuple[int, ...]


@functools.cache
def _threadpools() -> ThreadpoolController:
    """The BLAS and OpenMP libraries loaded in this process, found once: ``threadpool_limits``
    walks every loaded shared library each time it is entered, and selection enters it for each
    of its thousands of fits and predictions (8 % of a demo training)."""
    return ThreadpoolController()


def one_thread() -> Any:
    """BLAS and OpenMP held to one thread while the block runs."""
    return _threadpools().limit(limits=1)


def spam_probability(model: Any, X: np.ndarray) -> np.ndarray:
    """P(class 1) from a fitted classifier, also when its training data held one class only.

    On one thread (BLAS and OpenMP): histogram boosting predicts with OpenMP threads, which on
    the shared machine cost 28x the CPU time of one thread for the same scores (50 predictions
    of 800 UK2007 hosts: 6.6 s against 0.23 s); scoring in parallel is ``n_jobs`` threads."""
    spam = spam_column(model.classes_)
    if spam is None:
        return np.zeros(len(X))
    with one_thread():
        return np.asarray(model.predict_proba(X)[:, spam], dtype=np.float64)


def _fit_one(estimator: Any, X: np.ndarray, y: np.ndarray) -> Any:
    """Fit a clone of ``estimator``, with BLAS on one thread: the library's linear models make
    thousands of tiny BLAS calls (L-BFGS on ~80 columns), and OpenBLAS's worker threads wake
    for each; on a busy machine that made a logistic fit 5x slower in wall time, for the same
    coefficients (bit for bit on UK2007; tests/test_ensemble_speed.py: 1e-12).  Parallel fits
    are ``n_jobs``.  OpenMP is held to one thread for the same reason: histogram boosting's
    threads made one fit on the UK2007 link table 18x slower in wall time on the shared
    machine (9.96 s against 0.54 s for 200 iterations).  scikit-learn's parameter validation is
    off: the library's parameters are constants, checked once by a test
    (``test_every_library_model_passes_scikit_learns_parameter_checks``), and validating them
    again for each fit and each of a forest's trees was ~8 % of a demo training."""
    with one_thread(), warnings.catch_warnings(), sklearn.config_context(skip_parameter_validation=True):
        warnings.simplefilter("ignore", ConvergenceWarning)  # extreme ridge settings of the grid
        warnings.simplefilter("ignore", UserWarning)  # quantile bins collapsing on constant columns
        return clone(estimator).fit(X, y)


def make_folds(y: np.ndarray, groups: np.ndarray | None, n_folds: int, random_state: int) -> list[tuple]:
    """Stratified (group) k-fold train/test index pairs; fewer folds when there are too few groups
    or too few hosts of the rarer class for ``n_folds``.  Labels that cannot make two folds
    with both classes in every training part are a :class:`BadInputError` saying why, not a
    scikit-learn error from deep inside a fit."""
    counts = np.bincount(y, minlength=2)
    rarest = int(min(counts))
    if rarest < 2:
        raise BadInputError(f"classify: cross-fitting needs at least 2 labelled hosts of each class, got "
                            f"{int(counts[1])} spam and {int(counts[0])} nonspam; label more hosts")
    if groups is None:
        k = max(2, min(n_folds, rarest))
        folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state).split(y, y))
    else:
        n_groups = len(np.unique(groups))
        if n_groups < 2:
            raise BadInputError(f"classify: all {len(y)} labelled hosts fall in one group (group_by), so no two "
                                "folds keep a group apart; set group_by: none, or label hosts of other domains "
                                "or IP addresses")
        k = max(2, min(n_folds, n_groups))
        splitter = FastStratifiedGroupKFold(n_splits=k, shuffle=True, random_state=random_state)
        folds = list(splitter.split(np.zeros(len(y)), y, groups))
    for train_rows, _ in folds:
        missing = [(c, name) for c, name in ((1, "spam"), (0, "nonspam")) if not (y[train_rows] == c).any()]
        if missing:
            c, kind = missing[0]
            spread = "" if groups is None else \
                f" (its {int(counts[c])} hosts share {len(np.unique(groups[y == c]))} group(s) by group_by)"
            raise BadInputError(f"classify: a fold would train with no {kind} host{spread}; label {kind} hosts "
                                "on more domains or IP addresses, or set group_by: none")
    return folds


def hillclimb(P: np.ndarray, y: np.ndarray, n_init: int, n_iterations: int) -> np.ndarray:
    """Counts per column of ``P``: sorted initialisation with the best N columns (N at most
    ``n_init``, the N whose mean has the best AUC, as Caruana 2004), then greedy forward
    selection with replacement on the AUC of the mean; the best prefix of the climb wins."""
    m = P.shape[1]
    order = np.argsort(-auc_columns(y, P), kind="stable")
    counts = np.zeros(m, dtype=np.int64)
    # sorted initialisation: the best N models, N <= n_init chosen by the AUC of their mean
    top = order[: max(1, min(n_init, m))]
    prefix_auc = auc_columns(y, np.cumsum(P[:, top], axis=1) / np.arange(1, len(top) + 1))
    init = top[: int(np.argmax(prefix_auc)) + 1]
    counts[init] += 1
    total = P[:, init].sum(axis=1)
    size = len(init)
    best_auc, best = auc(y, total / size), counts.copy()
    for _ in range(n_iterations):
        gains = auc_columns(y, (total[:, None] + P) / (size + 1))
        j = int(np.argmax(gains))
        counts[j] += 1
        total += P[:, j]
        size += 1
        if gains[j] > best_auc:
            best_auc, best = float(gains[j]), counts.copy()
    return best


class EnsembleSelection(ClassifierMixin, BaseEstimator):
    """Ensemble selection over a model library trained per feature group.

    ``feature_groups`` maps a group name to column indices of ``X``; every library model is
    trained on each group, and on all columns (group ``all``).  ``models`` replaces the
    library (a list of :class:`~spamflow_ensemble.library.ModelSpec`).  ``tree_bins``: the
    tree-based families see every feature cut into at most this many quantile bins of the
    training hosts (0: raw values; ``"auto"``: raw values on small tables, 32 bins on large
    ones, :func:`~spamflow_ensemble.binning.bins_for`; ``tree_bins_`` says which).
    ``n_jobs``: processes for fitting, threads for scoring.  After ``fit``: ``ensemble_`` lists
    ``(model name, weight)``; ``candidates_``, ``model_auc_`` (out-of-fold AUC of each),
    ``oof_score_`` and ``oof_auc_`` (the ensemble's out-of-fold scores and AUC, optimistic:
    it was selected on those predictions) are inspectable; :meth:`compiled` gives the
    array form that scores hosts.  ``compress`` > 0: also fit ``mimic_``, a fast regressor
    trained on the ensemble's scores of the training hosts and ``compress`` times as many
    synthetic ones (:mod:`spamflow_ensemble.compression`), and score with it.
    """

    def __init__(self, library: str = "fast", feature_groups: dict[str, list[int]] | None = None,
                 models: list[ModelSpec] | None = None, n_folds: int = 5, n_init: int = 5,
                 n_iterations: int = 100, n_bags: int = 20, bag_fraction: float = 0.5, prune: float = 0.3,
                 tree_bins: int | str = "auto", compress: int = 0, random_state: int = 0, n_jobs: int = 1,
                 progress: bool | None = False) -> None:
        self.library = library
        self.feature_groups = feature_groups
        self.models = models
        self.n_folds = n_folds
        self.n_init = n_init
        self.n_iterations = n_iterations
        self.n_bags = n_bags
        self.bag_fraction = bag_fraction
        self.prune = prune
        self.tree_bins = tree_bins
        self.compress = compress
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress

    # -- building the candidates -------------------------------------------------------
    def _groups(self, n_features: int) -> dict[str, tuple[int, ...]]:
        everything = tuple(range(n_features))
        given = {name: tuple(int(c) for c in cols) for name, cols in (self.feature_groups or {}).items() if cols}
        if given.get("all", everything) != everything:
            raise ValueError("feature group name 'all' is reserved for every column")
        groups = {k: v for k, v in given.items() if v != everything}
        groups["all"] = everything
        return groups

    def _candidates(self, n_features: int) -> tuple[list[Candidate], list[ModelSpec]]:
        cands: list[Candidate] = []
        specs: list[ModelSpec] = []
        for group, cols in self._groups(n_features).items():
            library = self.models if self.models is not None else build_library(
                self.library, len(cols), self.random_state)  # type: ignore[arg-type]
            for spec in library:
                cands.append(Candidate(f"{spec.name}@{group}", spec.family, group, cols))
                specs.append(spec)
        return cands, specs

    # -- fitting -----------------------------------------------------------------------
    def fit(self, X: Any, y: Any, groups: Any = None) -> EnsembleSelection:
        X = np.asarray(X, dtype=np.float64)
        y_raw = np.asarray(y)
        self.classes_, y01 = np.unique(y_raw, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(f"ensemble selection needs two classes, got {list(self.classes_)}")
        y01 = y01.astype(np.int64)
        self.n_features_in_ = X.shape[1]
        if not 0 < self.prune <= 1:  # refused before the fits, not after
            raise ValueError(f"prune must be a share of the models in (0, 1], not {self.prune}")
        if self.compress < 0:
            raise ValueError(f"compress must be 0 (off) or a number of MUNGE passes, not {self.compress}")
        self.tree_bins_ = bins_for(self.tree_bins, *X.shape)  # type: ignore[arg-type]
        self.bin_edges_ = quantile_edges(X, self.tree_bins_) if self.tree_bins_ else None
        folds = make_folds(y01, None if groups is None else np.asarray(groups), self.n_folds, self.random_state)
        self.n_folds_used_ = len(folds)
        cands, specs = self._candidates(X.shape[1])
        self.candidates_ = cands
        inputs = self._inputs(X)
        # a boosting prefix is cut from its longer model (same group), not fitted
        index = {(c.group, spec.name): i for i, (c, spec) in enumerate(zip(cands, specs))}
        prefix_of = {i: index[(c.group, spec.prefix_of)] for i, (c, spec) in enumerate(zip(cands, specs))
                     if spec.prefix_of is not None and (c.group, spec.prefix_of) in index}
        # widest feature groups first: the costliest fits do not end up alone at the tail
        tasks = sorted(((i, f) for i in range(len(cands)) if i not in prefix_of for f in range(len(folds))),
                       key=lambda task: -len(cands[task[0]].columns))
        jobs = (delayed(_fit_one)(specs[i].estimator, self._view(inputs, i, folds[f][0]), y01[folds[f][0]])
                for i, f in tasks)
        runner = Parallel(n_jobs=self.n_jobs, return_as="generator")
        fitted_iter = runner(jobs)
        fitted_iter = progress_bar(fitted_iter, total=len(tasks), desc="library models x folds", unit="fit",
                                   setting=self.progress)
        fold_models: list[list[Any]] = [[None] * len(folds) for _ in cands]
        oof = np.zeros((len(y01), len(cands)))
        for (i, f), model in zip(tasks, fitted_iter):
            test = folds[f][1]
            oof[test, i] = spam_probability(model, self._view(inputs, i, test))
            fold_models[i][f] = model
        for i, base in prefix_of.items():
            for f, (_, test) in enumerate(folds):
                fold_models[i][f] = boosting_prefix(fold_models[base][f], specs[i].stages)
                oof[test, i] = spam_probability(fold_models[i][f], self._view(inputs, i, test))
        self.model_auc_ = auc_columns(y01, oof)
        self.weights_ = self._select(oof, y01)
        self.oof_score_ = oof @ self.weights_
        self.oof_auc_ = auc(y01, self.oof_score_)
        keep = set(np.flatnonzero(self.weights_ > 0)) | set(self._best_by("family").values()) | set(
            self._best_by("group").values())
        self.fold_models_ = {int(i): fold_models[i] for i in sorted(keep)}
        self.mimic_ = None
        self.mimic_hosts_ = 0
        if self.compress:
            if progress_on(self.progress):
                print(f"model compression: labelling {self.compress}x{len(X):,} synthetic hosts", file=sys.stderr)
            self.mimic_, self.mimic_hosts_ = fit_mimic(X, self.scores, self.compress, self.random_state)
        return self

    def _pruned(self, P: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The columns that enter selection, in their order: the ``prune`` share (rounded up)
        of best out-of-fold AUC, ties to the earlier column (Caruana 2006, library pruning:
        with few positives the climb otherwise follows noise into weak models)."""
        m = P.shape[1]
        if self.prune == 1:
            return np.arange(m)
        keep = max(1, math.ceil(self.prune * m - 1e-9))
        return np.sort(np.argsort(-auc_columns(y, P), kind="stable")[:keep])

    def _select(self, P: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Bagged selection among the pruned library; the bags are drawn first, then climbed
        ``n_jobs`` at a time in threads (ranking releases the GIL), so the weights do not depend
        on ``n_jobs``."""
        pool = self._pruned(P, y)
        m = len(pool)
        rng = np.random.default_rng(self.random_state)
        n_bags = max(1, self.n_bags)
        bags = [pool[np.sort(rng.choice(m, size=max(1, round(self.bag_fraction * m)), replace=False))]
                if n_bags > 1 and self.bag_fraction < 1 else pool for _ in range(n_bags)]
        climbs = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(hillclimb)(P[:, bag], y, self.n_init, self.n_iterations) for bag in bags)
        weights = np.zeros(P.shape[1])
        for bag, counts in zip(bags, climbs):
            weights[bag] += counts / counts.sum()
        return weights / weights.sum()

    def _best_by(self, key: str) -> dict[str, int]:
        """Per family (or feature group): the candidate of best out-of-fold AUC."""
        best: dict[str, int] = {}
        for i, c in enumerate(self.candidates_):
            k = getattr(c, key)
            if k not in best or self.model_auc_[i] > self.model_auc_[best[k]]:
                best[k] = i
        return best

    # -- inspecting and predicting -----------------------------------------------------
    @property
    def ensemble_(self) -> list[tuple[str, float]]:
        """The chosen models and their weights, heaviest first."""
        chosen = [(self.candidates_[i].name, float(w)) for i, w in enumerate(self.weights_) if w > 0]
        return sorted(chosen, key=lambda nw: (-nw[1], nw[0]))

    def _inputs(self, X: np.ndarray, indices: Any = None) -> dict[bool, np.ndarray]:
        """``X`` for the other families (key False) and its bins for the tree-based ones (True);
        the bins only if one of the candidates ``indices`` (default: all) needs them."""
        wanted = self.candidates_ if indices is None else [self.candidates_[i] for i in indices]
        needs_bins = any(c.family in BINNED_FAMILIES for c in wanted)
        binned = to_bins(X, self.bin_edges_) if self.bin_edges_ is not None and needs_bins else X
        return {False: X, True: binned}

    def _view(self, inputs: dict[bool, np.ndarray], index: int, rows: Any = None) -> np.ndarray:
        """The input of candidate ``index``: its family's matrix, its group's columns."""
        candidate = self.candidates_[index]
        matrix = inputs[candidate.family in BINNED_FAMILIES]
        return (matrix if rows is None else matrix[rows])[:, candidate.columns]

    def _scores(self, inputs: dict[bool, np.ndarray], index: int) -> np.ndarray:
        view = self._view(inputs, index)
        return np.mean([spam_probability(m, view) for m in self.fold_models_[index]], axis=0)

    def _features(self, X: Any) -> np.ndarray:
        """``X`` as float64, refused unless it has the fitted number of features."""
        X = np.asarray(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, the ensemble was fitted on {self.n_features_in_}")
        return X

    def _many_scores(self, X: Any, indices: list[int]) -> list[np.ndarray]:
        """Scores of several kept candidates, ``n_jobs`` at a time in threads (tree
        prediction releases the GIL)."""
        X = self._features(X)
        self._check_models(indices)
        inputs = self._inputs(X, indices)
        return list(Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(self._scores)(inputs, i) for i in indices))

    def candidate_scores(self, X: Any, index: int) -> np.ndarray:
        """P(spam) of one kept candidate: the mean of its fold models."""
        return self._many_scores(X, [index])[0]

    def best_scores(self, X: Any, key: str) -> dict[str, np.ndarray]:
        """Per family (``key="family"``) or feature group (``"group"``): the scores of its model
        of best out-of-fold AUC, to evaluate each family or group on held-out hosts."""
        if getattr(self, "scoring_only_", False):
            raise ValueError("this ensemble was loaded from a model file, which keeps only the chosen models: "
                             "the best model of each family and group needs the trained ensemble (evaluate)")
        best = self._best_by(key)
        return dict(zip(best, self._many_scores(X, list(best.values()))))

    def for_scoring(self) -> EnsembleSelection:
        """A copy holding only what scoring needs, for a model file: the chosen candidates
        (renumbered, in their order) with their weights and fold models; with a mimic
        (``compress``), which scores instead of them, no fold model at all.  The other
        candidates' models (the best of each family and group, kept for evaluation) made up
        most of the demo's model file; a copy's ``best_scores`` is refused."""
        chosen = np.flatnonzero(self.weights_ > 0)
        slim = copy.copy(self)
        slim.candidates_ = [self.candidates_[i] for i in chosen]
        slim.weights_ = self.weights_[chosen]
        slim.model_auc_ = self.model_auc_[chosen]
        has_mimic = getattr(self, "mimic_", None) is not None
        slim.fold_models_ = {} if has_mimic else {k: self.fold_models_[int(i)] for k, i in enumerate(chosen)}
        slim.scoring_only_ = True
        slim.__dict__.pop("_compiled", None)  # rebuilt for the slim copy on demand
        return slim

    def _check_models(self, indices: Any) -> None:
        """Refuse to score candidates whose fold models this ensemble does not hold."""
        absent = [self.candidates_[i].name for i in indices if i not in self.fold_models_]
        if absent:
            raise ValueError(f"no fitted models for {absent[:3]}: a model file of a compressed ensemble keeps "
                             "only its mimic (predict_proba); the ensemble's own scores need the trained ensemble")

    def compiled(self, weights: dict[int, float] | None = None) -> CompiledEnsemble:
        """The kept candidates in ``weights`` (default: the ensemble's), rewritten as arrays for
        fast scoring (:mod:`spamflow_ensemble.compiled`); the ensemble's is built once."""
        if weights is not None:
            self._check_models(weights)
            return compile_ensemble(self.candidates_, self.fold_models_, weights, BINNED_FAMILIES,
                                    self.n_features_in_)
        if getattr(self, "_compiled", None) is None:
            chosen = {int(i): float(self.weights_[i]) for i in np.flatnonzero(self.weights_ > 0)}
            self._compiled = self.compiled(chosen)
        return self._compiled

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("_compiled", None)  # rebuilt on demand; a saved model holds the fitted models only
        return state

    def scores(self, X: Any, compiled: CompiledEnsemble | None = None) -> np.ndarray:
        """The weighted sum of P(spam) over ``compiled`` (default: the ensemble), in blocks of
        :data:`SCORE_BLOCK` hosts (bounded memory; the trees' input stays in cache)."""
        X = self._features(X)
        compiled = compiled or self.compiled()
        if len(X) > SCORE_BLOCK:
            return np.concatenate([self._block_scores(X[start:start + SCORE_BLOCK], compiled)
                                   for start in range(0, len(X), SCORE_BLOCK)])
        return self._block_scores(X, compiled)

    def _block_scores(self, X: np.ndarray, compiled: CompiledEnsemble) -> np.ndarray:
        inputs = self._inputs(X, compiled.candidates)
        return compiled.score(lambda binned, columns: inputs[binned][:, list(columns)], X,
                              lambda i: self._scores(inputs, i), self.n_jobs)

    def predict_proba(self, X: Any) -> np.ndarray:
        """The ensemble's spam probability; with ``compress``, its mimic's (:meth:`scores` gives
        the ensemble's own)."""
        mimic = getattr(self, "mimic_", None)
        if mimic is not None:
            p = np.clip(mimic.predict(self._features(X)), 0.0, 1.0)
        else:
            p = np.clip(self.scores(X), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        return np.asarray(self.classes_)[(self.predict_proba(X)[:, 1] >= 0.5).astype(int)]
