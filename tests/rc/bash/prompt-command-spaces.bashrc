# PROMPT_COMMAND with leading spaces and a trailing comment.
PROMPT_COMMAND='   history -a   # keep every terminal'"'"'s history'
