# interactive-terminal-mcp shell integration for fish: OSC 633 sequences, each ending with this
# terminal's nonce. Sourced by `fish --init-command`, after the user's own config.fish.
if set -q PM_TERM_NONCE_FILE; and test -r "$PM_TERM_NONCE_FILE"
    read -g __pmt_nonce <"$PM_TERM_NONCE_FILE"
    command rm -f -- "$PM_TERM_NONCE_FILE" 2>/dev/null
end
set -e PM_TERM_NONCE_FILE
set -e PM_TERM_NO_USER_RC
# The user's config has run: until this mark, a still screen may be a question it asks.
if set -q __pmt_nonce; and test -n "$__pmt_nonce"
    printf '\e]633;P;PmRc=done;%s\a' $__pmt_nonce
end

if set -q __pmt_nonce; and test -n "$__pmt_nonce"
    # The command line and cwd go inside a sequence: its separators and controls escaped.
    function __pmt_esc
        set -l s (string replace -a -- '\\' '\\\\' $argv[1] | string collect)
        set s (string replace -a -- \n '\\x0a' "$s" | string collect)
        set s (string replace -a -- ';' '\\x3b' "$s" | string collect)
        set s (string replace -a -- \r '\\x0d' "$s" | string collect)
        set s (string replace -a -- \e '\\x1b' "$s" | string collect)
        set s (string replace -a -- \a '\\x07' "$s" | string collect)
        printf '%s' $s
    end
    set -g __pmt_in_command 0
    function __pmt_preexec --on-event fish_preexec
        set -g __pmt_in_command 1
        set -l line (__pmt_esc "$argv[1]")
        printf '\e]633;E;%s;%s\a\e]633;C;%s\a' "$line" $__pmt_nonce $__pmt_nonce
    end
    function __pmt_postexec --on-event fish_postexec
        set -l ec $status
        if test "$__pmt_in_command" = 1
            printf '\e]633;D;%s;%s\a' $ec $__pmt_nonce
            set -g __pmt_in_command 0
        end
    end
    function __pmt_prompt_start --on-event fish_prompt
        set -l cwd (__pmt_esc "$PWD")
        printf '\e]633;P;Cwd=%s;%s\a\e]633;A;%s\a' "$cwd" $__pmt_nonce $__pmt_nonce
    end
    # The prompt's end: after whatever prompt the user has.
    if functions -q fish_prompt
        functions -c fish_prompt __pmt_user_prompt
    else
        function __pmt_user_prompt
            printf '%s> ' (prompt_pwd)
        end
    end
    function fish_prompt
        __pmt_user_prompt
        printf '\e]633;B;%s\a' $__pmt_nonce
    end
end
