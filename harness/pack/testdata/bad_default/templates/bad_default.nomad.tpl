job "[[ var "name" . ]]" {}
