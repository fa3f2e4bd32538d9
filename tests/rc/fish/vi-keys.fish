# vi key bindings with fish's mode prompt.
fish_vi_key_bindings
function fish_mode_prompt
    switch $fish_bind_mode
        case default
            printf '[N] '
        case insert
            printf '[I] '
        case '*'
            printf '[?] '
    end
end
