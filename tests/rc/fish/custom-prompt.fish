# A custom fish_prompt with colours and the last status, and a right prompt.
function fish_prompt
    set -l last $status
    set_color blue
    printf '%s' (prompt_pwd)
    set_color normal
    if test $last -ne 0
        set_color red
        printf ' [%s]' $last
        set_color normal
    end
    printf ' ❯ '
end
function fish_right_prompt
    date '+%H:%M'
end
