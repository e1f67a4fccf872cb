# cmake -DCSV=<file> -DMIN=<n> -P csv_rows.cmake: fails unless the CSV has at least MIN data
# rows (lines after its header), e.g. enough points for a training example's plot.
file(STRINGS "${CSV}" lines)
list(LENGTH lines n)
math(EXPR rows "${n} - 1")
message("${CSV}: ${rows} data rows")
if(rows LESS MIN)
  message(FATAL_ERROR "${CSV} has ${rows} data rows, fewer than ${MIN}")
endif()
