"""Training of the learned models (needs the ``train`` extra); nothing here is imported at run time."""
