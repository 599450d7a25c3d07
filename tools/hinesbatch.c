/* placeholder, replaced by the CLI */
#include "hinesbatch.h"
int main(void) { return 0; }
