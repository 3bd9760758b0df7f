// Turns CUPTI activity buffers into database rows, on the writer thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/cupti_api.h"
#include "collector/row_sink.h"

namespace gpuscope::collector {

// Decodes every record of `buffer` (valid bytes) into rows. Unknown kinds are
// counted (records_unknown_kind); a record CUPTI cannot read ends the buffer
// and is counted (truncated_buffers). Returns the number of records decoded.
size_t decode_activity_buffer(const CuptiApi& api, uint8_t* buffer, size_t valid, RowSink& sink);

// "__cxa_demangle or the name itself".
std::string demangle(const char* mangled);

}  // namespace gpuscope::collector
