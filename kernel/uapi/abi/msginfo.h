/*
 * The message info word: what a message carries.
 *
 *   bits  0..6   length   number of message registers (0..MSG_MAX_LENGTH)
 *   bits  7..8   extra_caps  capabilities transferred (0..MSG_MAX_EXTRA_CAPS)
 *   bits  9..11  caps_unwrapped  bitmask: cap i was unwrapped to its badge
 *   bits 12..    label    user-defined, or the invocation label (abi/invocation.h)
 */
#ifndef ABI_MSGINFO_H
#define ABI_MSGINFO_H

#include "types.h"

#define MSG_MAX_LENGTH      120
#define MSG_MAX_EXTRA_CAPS  3

static inline word_t msginfo_new(word_t label, word_t caps_unwrapped,
                                 word_t extra_caps, word_t length)
{
    return (label << 12) | ((caps_unwrapped & 7) << 9) |
           ((extra_caps & 3) << 7) | (length & 0x7f);
}

static inline word_t msginfo_length(word_t mi)         { return mi & 0x7f; }
static inline word_t msginfo_extra_caps(word_t mi)     { return (mi >> 7) & 3; }
static inline word_t msginfo_caps_unwrapped(word_t mi) { return (mi >> 9) & 7; }
static inline word_t msginfo_label(word_t mi)          { return mi >> 12; }
/* Length and extra caps as one number: the length itself exactly when no caps are sent. */
static inline word_t msginfo_length_and_caps(word_t mi) { return mi & 0x1ff; }

#endif
