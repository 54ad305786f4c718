# sweep figure: shares of a limit
# median of tok_s over passes, limit = host_read_gbs * 1e9 / bytes_per_token, share = median(tok_s) / median(limit) of the results with both, sweep roofline; summary per label.class over host: one value per host, the mean of its rows (n counts them): median, min, max, mean and its 95% Student t interval
set terminal pngcairo noenhanced size 900,560 font 'Sans,11'
set output 'limit.png'
set datafile separator '\t'
set grid xtics
set key at screen 0.5, character 0.4 center bottom horizontal Left reverse box samplen 2 maxcols 2 maxrows 2
set bmargin 7
set yrange [-0.6:14.6]
set ytics ('desk-14900k llama-3.2-3b-q8' 14, 'desk-14900k llama-3.1-8b-q4' 13, 'desk-14900k qwen-2.5-14b-q4' 12, 'desk-7950x llama-3.2-3b-q8' 11, 'desk-7950x llama-3.1-8b-q4' 10, 'desk-7950x qwen-2.5-14b-q4' 9, 'mini-m2pro llama-3.2-3b-q8' 8, 'mini-m2pro llama-3.1-8b-q4' 7, 'mini-m2pro qwen-2.5-14b-q4' 6, 'srv-epyc9654 llama-3.2-3b-q8' 5, 'srv-epyc9654 llama-3.1-8b-q4' 4, 'srv-epyc9654 qwen-2.5-14b-q4' 3, 'srv-xeon8480 llama-3.2-3b-q8' 2, 'srv-xeon8480 llama-3.1-8b-q4' 1, 'srv-xeon8480 qwen-2.5-14b-q4' 0)
set title 'roofline'
set ylabel 'host, model'
set xlabel 'share of the limit: tok_s / limit, median over passes'
set xrange [0:1.1083348764899288]
plot 'limit.dat' index 1 using (($5+$6)/2):(($1+$2)/2):5:6:1:2 with boxxyerror fs transparent solid 0.2 noborder lc rgb '#4477aa' title '95% t interval of the mean over host, per group', 'limit.dat' index 1 using 4:1:(0):($2-$1) with vectors nohead lw 2 lc rgb '#4477aa' title 'mean', 'limit.dat' index 1 using 6:(($1+$2)/2):3 with labels left offset 1,0 notitle, 'limit.dat' index 0 using 3:1 with points pt 7 ps 1.5 lt 1 title 'share'
