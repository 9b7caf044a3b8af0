"""The field finder's scores compiled (vision/_fieldscore.c): the same scores as the numpy (about 1e-13
apart here), on a rendered board's photo, for fields near it, far off it, beyond the photo and degenerate."""

from __future__ import annotations

import numpy as np
import pytest

from board_rules import Position
from tests.helpers import compiled
from vision import field_model
from vision.field_model import Scorer, lab_of, refine
from vision.render import render


def _compiled():
    return compiled(field_model._compiled, "vision._fieldscore")


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    image = render(Position.start("backgammon"), style="walnut", seed=3, size=(640, 480)).image
    return lab_of(image, 2.0)


def _numpy_scores(scorer: Scorer, corners: np.ndarray, params: np.ndarray, monkeypatch) -> np.ndarray:
    with monkeypatch.context() as m:
        m.setattr(field_model, "_compiled", None)
        return scorer.scores(corners, params)


def _trials(shape: tuple[int, int], count: int, seed: int) -> np.ndarray:
    h, w = shape
    rng = np.random.default_rng(seed)
    middle = np.array([[0.15 * w, 0.15 * h], [0.85 * w, 0.15 * h], [0.85 * w, 0.85 * h], [0.15 * w, 0.85 * h]])
    corners = middle[None] + rng.normal(0, 0.1 * w, (count, 4, 2))
    corners[0] = [[0, 0], [10, 0], [0, 10], [10, 10]]  # crossed: no field
    corners[1] = [[-50, -40], [w + 30, -30], [w + 20, h + 40], [-60, h + 30]]  # the photo inside the field
    corners[2] = [[5, 5], [6, 5], [6, 6], [5, 6]]  # a field of one px: one colour, which explains nothing
    corners[3] = [[100, 100], [200, 100], [1e6, 1e6], [100, 200]]  # most of the field beyond the photo
    corners[4] = [[0, 0], [0, 0], [0, 0], [0, 0]]  # no field
    return corners


@pytest.mark.parametrize("grid", [(64, 52), (160, 128)])
@pytest.mark.parametrize("params", [(0.08, 0.005, 0.42), (0.0, 0.0, 0.25), (0.2, 0.05, 0.49)])
def test_compiled_scores_are_the_numpys(photo, grid, params, monkeypatch):
    _compiled()
    scorer = Scorer(photo, *grid)
    corners = _trials(photo.shape[:2], 120, seed=len(params) + grid[0])
    p = np.array(params)
    ours = scorer.scores(corners, p)
    theirs = _numpy_scores(scorer, corners, p, monkeypatch)
    assert np.array_equal(ours < 0, theirs < 0)
    assert list(theirs[[0, 3, 4]]) == [-1, -1, -1] and theirs[2] == 0 and (theirs >= 0).sum() > 60
    # about 1e-13 apart on x86; where OpenCV's own bilinear reads round otherwise (other CPUs), 1e-7
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-12)
    # one at a time as in a stack
    assert [scorer.score(c, p) for c in corners[:20]] == list(ours[:20])


def test_a_fit_is_the_same_compiled_or_not(photo, monkeypatch):
    _compiled()
    h, w = photo.shape[:2]
    start = np.array([[0.2 * w, 0.2 * h], [0.8 * w, 0.22 * h], [0.82 * w, 0.8 * h], [0.18 * w, 0.78 * h]])
    ours = refine(Scorer(photo, 64, 52), start, np.array([0.08, 0.005, 0.42]), 6.0, 1.0)
    with monkeypatch.context() as m:
        m.setattr(field_model, "_compiled", None)
        theirs = refine(Scorer(photo, 64, 52), start, np.array([0.08, 0.005, 0.42]), 6.0, 1.0)
    np.testing.assert_allclose(ours[0], theirs[0], atol=1e-9)
    np.testing.assert_allclose(ours[1], theirs[1], atol=1e-12)
    assert ours[2] == pytest.approx(theirs[2], rel=1e-6)


def test_compiled_scores_refuse_buffers_that_do_not_agree(photo):
    module = _compiled()
    scorer = Scorer(photo, 64, 52)
    labels, sides, _ = scorer._model(np.array([0.08, 0.005, 0.42]))
    h, w = photo.shape[:2]
    corners = np.zeros((2, 4, 2))
    params = np.array([0.08, 0.005, 0.42])
    good = [scorer.lab, scorer.tensor, h, w, scorer._uv, labels, 12, sides.reshape(-1, 3), 8, corners, params]
    module.scores(*good, scorer._constants, np.empty(2))
    with pytest.raises(ValueError, match="sizes do not agree"):
        module.scores(*good, scorer._constants, np.empty(3))  # one score too many
    with pytest.raises(ValueError, match="sizes do not agree"):
        module.scores(*good[:2], h + 1, *good[3:], scorer._constants, np.empty(2))
    bad_labels = labels.copy()
    bad_labels[7] = 12
    with pytest.raises(ValueError, match="labels: 12 at sample 7"):
        module.scores(*good[:5], bad_labels, *good[6:], scorer._constants, np.empty(2))
    with pytest.raises(ValueError, match="whole number"):
        module.scores(*good[:9], corners.ravel()[:7], params, scorer._constants, np.empty(2))
