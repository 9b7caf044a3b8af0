# make demo  -- set everything up on a fresh machine, then run the main job on built-in stand-ins
# make test  -- set everything up, then run the test suite (what CI runs)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint format test-slow bench bench-board bench-referee bench-vision bench-vision-speed bench-dice train-dice train-dice-faces train-dice-cv train-checkers train-checkers-cv train-evaluator bench-evaluator bench-checkers-real soak-board setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py board_rules/_fastgen.c board_rules/_step_api.h engine/_heuristic.c vision/_fieldscore.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/tavli demo

test: $(STAMP) lint
	$(PY) -m pytest -q -m "not slow and not hardware"

# ruff: the lint rules and the format are in pyproject.toml; `make format` applies the format
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(PY) benchmarks/bench_rules.py

bench-referee: $(STAMP)
	$(PY) benchmarks/bench_referee.py

# the live page in headless chromium: board change -> page's SVG updated, beside board change -> LED frame
.PHONY: bench-page
bench-page: $(STAMP)
	$(PY) benchmarks/bench_page.py

# a hall under load: 100 tables on one mosquitto, the dashboard in chromium; action -> dashboard p50/p99
.PHONY: bench-hall
bench-hall: $(STAMP)
	$(PY) benchmarks/bench_hall.py

bench-vision: $(STAMP)
	$(PY) benchmarks/bench_vision.py

bench-vision-speed: $(STAMP)
	$(PY) benchmarks/bench_vision_speed.py

bench-dice: $(STAMP)
	$(PY) benchmarks/bench_dice.py

# the learned dice reader: trains on ../shared/data/dice and rendered frames, writes vision/models/dice.onnx
TRAIN_STAMP := $(VENV)/.train-installed
$(TRAIN_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,train]'
	touch $(TRAIN_STAMP)

# in two runs, on a GPU where torch sees one: 8,709 steps of 32 crops from scratch (a 12,000-step
# schedule, cut where the shipped run's time limit cut it), then 6,000 more from that network with
# its batch norms fixed and a lower rate; the workers (batch-making processes) are the shipped runs'
# and decide the batches
DICE_BASE = --steps 12000 --stop-after 8709 --batch 32 --lr 3e-3 --rendered 600 --mix 0.3,0.4,0.15,0.15 --workers 7
DICE_TUNE = --steps 6000 --batch 32 --lr 5e-4 --rendered 600 --mix 0.3,0.4,0.15,0.15 --workers 15 --seed 1
train-dice: $(TRAIN_STAMP)
	$(PY) training/train_dice.py --holdout-fold 4 $(DICE_BASE) --out build/dice/base.onnx
	$(PY) training/train_dice.py --holdout-fold 4 --init build/dice/base.onnx $(DICE_TUNE) --out vision/models/dice.onnx
	$(PY) training/train_dice_finder.py --steps 4000 --rendered 300 --workers 1 --threads 1 \
		--out vision/models/dice_finder.onnx
	$(PY) training/train_dice_faces.py --out vision/models/dice_faces.onnx

# the face classifier alone (the reader's second look at each weak die of a photo): two CPU threads
train-dice-faces: $(TRAIN_STAMP)
	$(PY) training/train_dice_faces.py --out vision/models/dice_faces.onnx

# the same two runs and the face classifier for each fifth of nell-byler/train left out (fold 4's is the shipped network),
# read by `benchmarks/bench_dice.py --cv build/dice-cv --sets nell`
train-dice-cv: $(TRAIN_STAMP)
	for k in 0 1 2 3 4; do \
		$(PY) training/train_dice.py --holdout-fold $$k $(DICE_BASE) --no-report --out build/dice-cv/base$$k.onnx \
		&& $(PY) training/train_dice.py --holdout-fold $$k --init build/dice-cv/base$$k.onnx $(DICE_TUNE) \
			--no-report --out build/dice-cv/fold$$k.onnx \
		&& $(PY) training/train_dice_faces.py --holdout-fold $$k --dice-model build/dice-cv/fold$$k.onnx \
			--out build/dice-cv/faces$$k.onnx || exit 1; done

# the learned checker reader: trains on the labelled real frames of ../shared/data/boards and rendered ones
# (one CPU thread), writes vision/models/checkers.onnx
train-checkers: $(TRAIN_STAMP)
	$(PY) training/train_checkers.py --out vision/models/checkers.onnx

# the same training once per real camera left out (build/checkers-cv), then the real frames read by them
train-checkers-cv: $(TRAIN_STAMP)
	$(PY) training/train_checkers.py --cv build/checkers-cv
	$(PY) benchmarks/bench_checkers_real.py --cv build/checkers-cv

# a game's learned evaluator, by self-play with TD(lambda) in numpy on one CPU core (no torch):
# make train-evaluator VARIANT=plakoto writes engine/models/plakoto.npz (GAMES: the self-play games,
# by default as many as the shipped net's)
VARIANT ?= plakoto
train-evaluator: $(STAMP)
	$(PY) training/train_evaluator.py --variant $(VARIANT) $(if $(GAMES),--games $(GAMES))

# the learned evaluators against the heuristic, 2000 games a game type (JOBS: processes at once)
JOBS ?= 1
bench-evaluator: $(STAMP)
	$(PY) benchmarks/bench_evaluator.py --jobs $(JOBS)

bench-checkers-real: $(STAMP)
	$(PY) benchmarks/bench_checkers_real.py

bench-board: $(STAMP)
	$(PY) benchmarks/bench_board.py

# the board link under line faults (realistic and harsh presets): prints frames, LED ACKs, recovery times
soak-board: $(STAMP)
	$(PY) benchmarks/soak_board.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
