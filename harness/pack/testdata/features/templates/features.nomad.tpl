[[- template "features.check" . -]]
job "[[ meta "pack.name" . ]]-[[ .my.message ]]" {
  datacenters = [[ var "datacenters" . | toStringList ]]
  meta {
    old_form    = "[[ .features.message ]]"
    pack_name   = "[[ .nomad_pack.pack.name ]]"
    version     = "[[ meta "pack.version" . ]]"
    count_kind  = "[[ kindOf (var "count" .) ]]"
    ratio       = "[[ var "ratio" . ]]"
    enabled     = "[[ var "enabled" . ]]"
    team        = "[[ (var "labels" .).team ]]"
    port        = "[[ (var "port" .).name ]]:[[ (var "port" .).to ]]"
    var_count   = "[[ len (vars .) ]]"
    upper       = "[[ var "message" . | upper ]]"
[[- if ne (var "extra_file" .) "" ]]
    file        = "[[ fileContents (var "extra_file" .) | trim ]]"
[[- end ]]
  }
  group "g" {
    count = [[ var "count" . ]]
  }
}
