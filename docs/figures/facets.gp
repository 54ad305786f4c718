# sweep plot of tok_s against budget, sweep decode-grid: render with 'gnuplot THIS_FILE'
set terminal pngcairo noenhanced size 1800,560 font 'Sans,11'
set output 'facets.png'
set datafile separator '\t'
set grid
set xlabel 'budget'
set ylabel 'tok_s (tokens/s), median over passes and host'
set logscale x 2
set offsets graph 0.03, graph 0.03, 0, 0
set xtics ('256' 256, '1024' 1024, '4096' 4096)
set yrange [0:*]
set multiplot layout 1,2 title 'decode-grid'
set title 'model=llama-8b'
set key at screen 0.25, character 0.4 center bottom horizontal Left reverse box samplen 2 maxcols 2 maxrows 2
set bmargin 7
plot 'facets.dat' index 0 using 1:2:5:6 with yerrorbars lt 1 lw 1.5 pt 0 notitle, 'facets.dat' index 0 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt 1 title 'system=cache', 'facets.dat' index 1 using 1:2:5:6 with yerrorbars lt 2 lw 1.5 pt 0 notitle, 'facets.dat' index 1 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt 2 title 'system=baseline', keyentry with yerrorbars lc 'black' lw 1.5 pt 0 title 'bars: min-max over passes and host'
set title 'model=qwen-14b'
set key at screen 0.75, character 0.4 center bottom horizontal Left reverse box samplen 2 maxcols 2 maxrows 2
set bmargin 7
plot 'facets.dat' index 2 using 1:2:5:6 with yerrorbars lt 1 lw 1.5 pt 0 notitle, 'facets.dat' index 2 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt 1 title 'system=cache', 'facets.dat' index 3 using 1:2:5:6 with yerrorbars lt 2 lw 1.5 pt 0 notitle, 'facets.dat' index 3 using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt 2 title 'system=baseline', keyentry with yerrorbars lc 'black' lw 1.5 pt 0 title 'bars: min-max over passes and host'
unset multiplot
