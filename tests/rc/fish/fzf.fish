# fzf's key bindings (Debian's fzf ships them as a vendor function).
#@needs /usr/share/fish/vendor_functions.d/fzf_key_bindings.fish
fzf_key_bindings
