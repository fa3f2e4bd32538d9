# liquidprompt (Debian's liquidprompt): replaces PROMPT_COMMAND (running the old one itself),
# rebuilds PS1 at every prompt, and installs its own DEBUG trap.
#@needs /usr/share/liquidprompt/liquidprompt
. /usr/share/liquidprompt/liquidprompt
