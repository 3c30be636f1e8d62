"""One module per CLI command; each exposes register(app). Commands parse options, call the
library, print, and choose the exit code — nothing more."""
