/* What a printed number says of the figure it rounds. */
#ifndef VARPROF_TESTS_PRINTED_NUMBER_H
#define VARPROF_TESTS_PRINTED_NUMBER_H

/* Half the unit of the last digit of a number as printed ("0.00512",
   "7.50e-06"): how far the figure it rounds may lie from it. */
double printed_half_unit(const char *text);

#endif
