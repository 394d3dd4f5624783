# check.sh GRIDDIR : merge pitstop rows into the lead's default-grid baselines, summary, diff against the default
cd /work/wt/azure12
F="mooncake-conv azure-conv azure-code mixed coding fanout infercept-multi infercept-multi-vicuna chat infercept-single-vicuna infercept-single mcts react"
D=$1
S=${2:-1}
scripts/policy_rates_merge.py docs/img/policies-session11/lead/default-grid $D $D/merged $S $F
scripts/policy_rates_table.py --summary $D/merged $(echo $F | tr ' ' ,) $S > $D/check-s$S.md
echo "PASS: $(grep -c PASS $D/check-s$S.md) (default $(grep -c PASS docs/img/policies-session11/lead/default-grid/check-s$S.md))"
diff <(grep "^|" docs/img/policies-session11/lead/default-grid/check-s$S.md) <(grep "^|" $D/check-s$S.md)
