// The job-wide process attributes of program mode (program_process_attrs.cpp):
// environment, current directory, umask, locale.
#pragma once

namespace agora {
// This rank replays the changes other ranks made that it has not applied
// yet; one load when there are none. Called before every body starts and
// after the pthreads shim's synchronisations.
void program_attrs_catch_up();
}  // namespace agora
