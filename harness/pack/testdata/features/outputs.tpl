Deployed [[ meta "pack.name" . ]] with message [[ var "message" . ]].
