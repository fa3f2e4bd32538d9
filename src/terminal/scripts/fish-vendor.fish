# interactive-terminal-mcp: a fish that a user's ~/.bashrc starts in one of this server's bash
# terminals (`exec fish`, where the login shell cannot be changed) finds this file through
# XDG_DATA_DIRS, which the bash integration sets only while the user's rc runs. It loads the
# fish integration at the first prompt, after the user's own config, as `--init-command`
# would, and takes our directories back out of the environment its programs inherit.
if set -q PM_TERM_FISH_INTEGRATION; and status is-interactive
    set -g __pmt_integration $PM_TERM_FISH_INTEGRATION
    function __pmt_deferred --on-event fish_prompt
        functions -e __pmt_deferred
        source $__pmt_integration
        set -e __pmt_integration
        # This prompt's event has fired already: its marks come from here.
        functions -q __pmt_prompt_start; and __pmt_prompt_start
    end
end
if set -q PM_TERM_FISH_DATA
    set -l rest (string replace -- "$PM_TERM_FISH_DATA:" '' "$XDG_DATA_DIRS")
    # Unset before, the bash integration gave it the default after ours.
    if test -n "$rest"; and test "$rest" != /usr/local/share:/usr/share
        set -gx XDG_DATA_DIRS $rest
    else
        set -e XDG_DATA_DIRS
    end
end
if set -q PM_TERM_ZDOTDIR; and test "$ZDOTDIR" = "$PM_TERM_ZDOTDIR"
    if set -q PM_TERM_USER_ZDOTDIR
        set -gx ZDOTDIR $PM_TERM_USER_ZDOTDIR
    else
        set -e ZDOTDIR
    end
end
set -e PM_TERM_FISH_INTEGRATION PM_TERM_FISH_DATA PM_TERM_ZDOTDIR PM_TERM_USER_ZDOTDIR
