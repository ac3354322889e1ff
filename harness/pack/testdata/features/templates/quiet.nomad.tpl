[[- if ne (var "mode" .) "quiet" ]]
job "loud" {}
[[- end ]]
