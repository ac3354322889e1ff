[[- if eq (var "mode" .) "typo" ]]
[[ var "mesage" . ]]
[[- end ]]
