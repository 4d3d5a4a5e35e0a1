// libqrencode, imported whole; no shims needed.
#include <qrencode.h>
