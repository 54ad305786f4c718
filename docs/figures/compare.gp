# sweep figure: comparison
# tok_s of system=cache over system=baseline, paired by item: ratio of means (n = 30 pairs a row; 95% percentile bootstrap interval of 10000 resamples, seed 1), sweep decode-grid
set terminal pngcairo noenhanced size 900,560 font 'Sans,11'
set output 'compare.png'
set datafile separator '\t'
set grid xtics
set key at screen 0.5, character 0.4 center bottom horizontal Left reverse box samplen 2 maxcols 1 maxrows 2
set bmargin 7
set yrange [-0.6:5.6]
set ytics ('llama-8b 256' 5, 'llama-8b 1024' 4, 'llama-8b 4096' 3, 'qwen-14b 256' 2, 'qwen-14b 1024' 1, 'qwen-14b 4096' 0)
set title 'decode-grid'
set ylabel 'model, budget'
set xlabel 'tok_s cache/baseline, ratio of means over paired units'
set xrange [0.99549900958131188:1.1008221853786144]
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lw 1.5 lc rgb 'black'
plot 'compare.dat' index 0 using 3:1 with points pt 7 ps 1.5 lt 1 title 'cache/baseline [95% CI]', 'compare.dat' index 0 using 3:1:4:5 with xerrorbars pt 0 lw 1.5 lt 1 title '95% paired percentile bootstrap interval, 10000 resamples, seed 1'
