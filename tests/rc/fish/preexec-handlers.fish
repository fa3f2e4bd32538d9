# The user's own fish_preexec / fish_postexec handlers: a window title and a command timer
# that run a command of their own (changing $status) and print an escape sequence.
function __title --on-event fish_preexec
    printf '\e]0;%s\a' $argv[1]
end
function __timer --on-event fish_postexec
    set -g __last_duration $CMD_DURATION
    test $CMD_DURATION -gt 100000
end
function __greet --on-event fish_prompt
    true
end
