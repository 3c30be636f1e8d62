"""Jobs that combine the layers below: the nightly (ingest + checks + reports) and the example
warehouse. The commands call them; they import everything below them and nothing above."""
