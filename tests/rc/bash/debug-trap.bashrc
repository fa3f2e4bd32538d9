# An existing DEBUG trap: the common "command in the window title" recipe, and a counter.
__cmds=0
trap '__cmds=$((__cmds + 1)); printf "\033]0;%s\007" "$BASH_COMMAND"' DEBUG
