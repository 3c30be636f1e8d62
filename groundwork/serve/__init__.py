"""`groundwork serve`: a local read-only web app over the warehouse (README.md#serve)."""
