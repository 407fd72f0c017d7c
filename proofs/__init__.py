"""CrossHair proof run of the prefix model's core contracts (see README.md); not part of the model."""
