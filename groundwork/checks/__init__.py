"""The checks: every rule as a SQL file, the derived relations they read, the lint store, the
exact messages, lint, the source check (verify, sources) and drift. Imports only groundwork.core."""
