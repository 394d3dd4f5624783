# check.sh GRIDDIR : merge pitstop rows into the lead's default-grid baselines, summary, diff against the default
cd /work/wt/azure12
F="mooncake-conv azure-conv azure-code mixed coding fanout infercept-multi infercept-multi-vicuna chat infercept-single-vicuna infercept-single mcts react"
D=$1
python3 /tmp/az12/merge.py docs/img/policies-session11/lead/default-grid $D $D/merged 1 $F
scripts/policy_rates_table.py --summary $D/merged $(echo $F | tr ' ' ,) 1 > $D/check-s1.md
echo "PASS: $(grep -c PASS $D/check-s1.md) (default $(grep -c PASS docs/img/policies-session11/lead/default-grid/check-s1.md))"
diff <(grep "^|" docs/img/policies-session11/lead/default-grid/check-s1.md) <(grep "^|" $D/check-s1.md)
