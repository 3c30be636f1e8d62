"""The Spark engine (`groundwork spark run`): the same parser, rule files, templates and reports
as the local path, over an archive any Spark cluster reads (docs: README "Beyond one machine")."""
