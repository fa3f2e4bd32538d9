# PROMPT_COMMAND as an array (bash >= 5.1), each element its own command; one keeps $?.
__last_status() { __status=$?; return $__status; }
__title() { printf '\033]0;%s\007' "${PWD##*/}"; }
PROMPT_COMMAND=(__last_status 'history -a;' __title)
